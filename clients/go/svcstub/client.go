package svcstub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Client calls svc-stub's test-control plane (/_test/*), in one namespace when it has one. Its
// methods return errors; a test's Stub calls them and fails the test instead.
type Client struct {
	// BaseURL is the stub itself.
	BaseURL string
	// Namespace every call is in; "" is the default one.
	Namespace string
	// URL is the base URL to give a client library: BaseURL/ns/Namespace.
	URL string
	// ControlToken is the stub's --control-token, if it has one.
	ControlToken string
	// HTTP carries the calls (its Timeout is not used: each call takes its context's deadline).
	// NewClient gives it a client of this package's own, never http.DefaultClient or
	// http.DefaultTransport, so a tool that replaces those (gock, httpmock) for the client under
	// test leaves the stub's control calls alone.
	HTTP *http.Client
}

// DefaultWait is how long a wait on the journal waits when its context has no deadline.
const DefaultWait = 5 * time.Second

const (
	callTimeout = 10 * time.Second
	maxWaitMs   = 60_000
)

// NewClient is a client of the stub at url, in its default namespace; SVC_STUB_CONTROL_TOKEN
// is its control token.
func NewClient(stubURL string) *Client {
	base := strings.TrimRight(stubURL, "/")
	return &Client{BaseURL: base, URL: base, ControlToken: os.Getenv(TokenVariable), HTTP: controlHTTP}
}

// controlHTTP carries every control call: a transport of this package's own, as
// http.DefaultTransport is made (proxies from the environment, keep-alive connections).
var controlHTTP = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	ForceAttemptHTTP2:     true,
	MaxIdleConns:          100,
	MaxIdleConnsPerHost:   100,
	IdleConnTimeout:       90 * time.Second,
	TLSHandshakeTimeout:   10 * time.Second,
	ExpectContinueTimeout: time.Second,
}}

// InNamespace is a client of the same stub in namespace name (created by its first request there).
func (c *Client) InNamespace(name string) *Client {
	scoped := *c
	scoped.Namespace = name
	scoped.URL = c.BaseURL + "/ns/" + url.PathEscape(name)
	return &scoped
}

// Health says whether the stub answers as svc-stub does.
func (c *Client) Health(ctx context.Context) error {
	var body struct{ OK bool }
	if err := c.call(ctx, call{method: "GET", path: "/health", unscoped: true}, &body); err != nil {
		return err
	}
	if !body.OK {
		return errors.New("its /health does not say ok")
	}
	return nil
}

// Version is the stub's version (its OpenAPI document's).
func (c *Client) Version(ctx context.Context) (string, error) {
	var document struct{ Info struct{ Version string } }
	err := c.call(ctx, call{method: "GET", path: "/_test/openapi.json", unscoped: true}, &document)
	return document.Info.Version, err
}

// Reset clears everything recorded and armed in the namespace and serves its start-up fixtures again.
func (c *Client) Reset(ctx context.Context) error {
	return c.call(ctx, call{method: "POST", path: "/_test/reset", body: map[string]any{}}, nil)
}

// Arm arms a fault until it is disarmed (or for its TTLRequests).
func (c *Client) Arm(ctx context.Context, f Fault) (ArmedFault, error) {
	document, err := f.arming()
	if err != nil {
		return ArmedFault{}, err
	}
	var answer struct{ Fault ArmedFault }
	err = c.call(ctx, call{method: "POST", path: "/_test/fault", body: document}, &answer)
	return answer.Fault, err
}

// Armed lists the faults armed in the namespace.
func (c *Client) Armed(ctx context.Context) ([]ArmedFault, error) {
	var answer struct{ Armed []ArmedFault }
	err := c.call(ctx, call{method: "GET", path: "/_test/fault"}, &answer)
	return answer.Armed, err
}

// Disarm disarms one fault.
func (c *Client) Disarm(ctx context.Context, id int) error {
	return c.call(ctx, call{method: "DELETE", path: "/_test/fault/" + strconv.Itoa(id)}, nil)
}

// ClearFaults disarms every fault of the namespace.
func (c *Client) ClearFaults(ctx context.Context) error {
	return c.call(ctx, call{method: "DELETE", path: "/_test/fault"}, nil)
}

// Recorded is everything clients sent to be kept.
func (c *Client) Recorded(ctx context.Context) (Recorded, error) {
	var recorded Recorded
	err := c.call(ctx, call{method: "GET", path: "/_test/events"}, &recorded)
	return recorded, err
}

// Requests is the journal in arrival order (by Seq), each request with its body; route keeps
// one route (RouteProjects: every projects.* route). A request still in flight (a delay or hang
// fault) is listed once it ends.
func (c *Client) Requests(ctx context.Context, route Route) ([]Request, error) {
	var answer struct{ Requests []Request }
	err := c.call(ctx, call{method: "GET", path: "/_test/requests", query: journalQuery(route)}, &answer)
	return answer.Requests, err
}

// Request is one request of the journal.
func (c *Client) Request(ctx context.Context, seq int) (Request, error) {
	var request Request
	err := c.call(ctx, call{method: "GET", path: "/_test/requests/" + strconv.Itoa(seq)}, &request)
	return request, err
}

// journalQuery asks for route's requests (AnyRoute: all), each in full.
func journalQuery(route Route) url.Values {
	query := url.Values{"bodies": {"true"}}
	if route != AnyRoute {
		query.Set("route", string(route))
	}
	return query
}

// Verdict is the stub's answer to one of its checks: whether it held, and the words that say so.
type Verdict struct {
	Check   string `json:"check"`
	Passed  bool   `json:"passed"`
	Message string `json:"message"`
}

// Check runs one of the stub's checks of the journal ("retry-after", "no-request", "exposure",
// "no-warnings") with its parameters; a failed check is a Verdict, not an error.
func (c *Client) Check(ctx context.Context, check string, parameters url.Values) (Verdict, error) {
	var verdict Verdict
	err := c.call(ctx, call{method: "GET", path: "/_test/checks/" + url.PathEscape(check), query: parameters}, &verdict)
	return verdict, err
}

// Coverage is what requests in the client's namespace met (ScopeNamespace), or the whole run's
// (ScopeRun); profile keeps one profile ("": every one). Raw is the stub's JSON answer as it
// came, to keep as a report (svc-stub coverage --report reads it).
func (c *Client) Coverage(ctx context.Context, scope Scope, profile string) (coverage Coverage, raw []byte, err error) {
	query := url.Values{"scope": {string(scope)}}
	if profile != "" {
		query.Set("profile", profile)
	}
	var answer json.RawMessage
	if err = c.call(ctx, call{method: "GET", path: "/_test/coverage", query: query}, &answer); err != nil {
		return Coverage{}, nil, err
	}
	if err = json.Unmarshal(answer, &coverage); err != nil {
		return Coverage{}, nil, &DecodeError{URL: c.BaseURL, Path: "/_test/coverage", Err: err}
	}
	return coverage, answer, nil
}

// Offline is an address where nothing listens: a connection to it is refused at once.
func (c *Client) Offline(ctx context.Context) (string, error) {
	var answer struct{ URL string }
	err := c.call(ctx, call{method: "GET", path: "/_test/offline", unscoped: true}, &answer)
	return answer.URL, err
}

// Snapshot is the namespace's inspector page, as one HTML file.
func (c *Client) Snapshot(ctx context.Context) (string, error) {
	var page string
	err := c.call(ctx, call{method: "GET", path: "/_test/ui/snapshot"}, &page)
	return page, err
}

// WaitForRecorded long-polls the stub until list ("events", "svcEvents" or "targets") holds n,
// or ctx's deadline (DefaultWait without one) passes; WaitTimeoutError shows what did arrive.
func (c *Client) WaitForRecorded(ctx context.Context, list string, n int) ([]Event, error) {
	minimum := map[string]string{"events": "minEvents", "svcEvents": "minSvcEvents", "targets": "minTargets"}[list]
	if minimum == "" {
		return nil, fmt.Errorf("svcstub: no recorded list %q (events, svcEvents, targets)", list)
	}
	ctx, waitMs, cancel := waiting(ctx)
	defer cancel()
	query := url.Values{minimum: {strconv.Itoa(n)}, "waitMs": {strconv.Itoa(waitMs)}}
	var recorded Recorded
	if err := c.call(ctx, call{method: "GET", path: "/_test/events", query: query, waitMs: waitMs}, &recorded); err != nil {
		return nil, err
	}
	got := map[string][]Event{"events": recorded.Events, "svcEvents": recorded.SvcEvents, "targets": recorded.Targets}[list]
	if len(got) < n {
		return got, &WaitTimeoutError{What: list, Want: n, Got: len(got), Waited: time.Duration(waitMs) * time.Millisecond, Events: got}
	}
	return got, nil
}

// WaitForRequests long-polls the stub until n requests (to route, unless AnyRoute) are in the
// journal; a browser's preflight counts only when it is the route asked for.
func (c *Client) WaitForRequests(ctx context.Context, n int, route Route) ([]Request, error) {
	ctx, waitMs, cancel := waiting(ctx)
	defer cancel()
	query := journalQuery(route)
	query.Set("min", strconv.Itoa(n))
	query.Set("waitMs", strconv.Itoa(waitMs))
	var answer struct{ Requests []Request }
	if err := c.call(ctx, call{method: "GET", path: "/_test/requests", query: query, waitMs: waitMs}, &answer); err != nil {
		return nil, err
	}
	counted := 0
	for _, r := range answer.Requests {
		if route != AnyRoute || r.Route != RoutePreflight {
			counted++
		}
	}
	if counted < n {
		return answer.Requests, &WaitTimeoutError{What: "requests", Route: route, Want: n, Got: counted,
			Waited: time.Duration(waitMs) * time.Millisecond, Requests: answer.Requests}
	}
	return answer.Requests, nil
}

// SetFixtures serves these fixtures in the namespace: a document (a map or a struct) or the
// path of a YAML or JSON file (read here: the stub opens no path it is sent); merge: over the
// served ones, key by key. It returns the flag keys served.
func (c *Client) SetFixtures(ctx context.Context, source any, merge bool) ([]string, error) {
	request, err := documentCall("/_test/fixtures", source, merge)
	if err != nil {
		return nil, err
	}
	var answer struct{ Flags []string }
	err = c.call(ctx, request, &answer)
	return answer.Flags, err
}

// SeedManagement seeds the management plane (a fixture file's management: section, or a file
// holding one); it returns the management plane as it is now.
func (c *Client) SeedManagement(ctx context.Context, source any, merge bool) (map[string]any, error) {
	request, err := documentCall("/_test/management", source, merge)
	if err != nil {
		return nil, err
	}
	var state map[string]any
	err = c.call(ctx, request, &state)
	return state, err
}

// Management is the management plane as it is now: every organisation, no key or token.
func (c *Client) Management(ctx context.Context) (map[string]any, error) {
	var state map[string]any
	err := c.call(ctx, call{method: "GET", path: "/_test/management"}, &state)
	return state, err
}

// SetVendorFlags serves this /flags body verbatim on the vendor routes.
func (c *Client) SetVendorFlags(ctx context.Context, body any) error {
	return c.call(ctx, call{method: "POST", path: "/_test/flags", body: body}, nil)
}

// SetRateLimit sets per-key rate limits until reset: every key's (0: none), and some keys' own.
func (c *Client) SetRateLimit(ctx context.Context, perSecond float64, perKey map[string]float64) error {
	body := map[string]any{"perSecond": nil, "perKey": map[string]float64{}}
	if perSecond > 0 {
		body["perSecond"] = perSecond
	}
	if perKey != nil {
		body["perKey"] = perKey
	}
	return c.call(ctx, call{method: "POST", path: "/_test/rate-limit", body: body}, nil)
}

// CreateNamespace creates a namespace for the test that id names (t.Name()), with these keys
// bound to it, and is a client in it. The stub names it: readable, and distinct from any other.
func (c *Client) CreateNamespace(ctx context.Context, id string, keys ...string) (*Client, error) {
	if keys == nil {
		keys = []string{}
	}
	var created NamespaceInfo
	body := map[string]any{"test": id, "keys": keys}
	if err := c.call(ctx, call{method: "POST", path: "/_test/namespaces", body: body, unscoped: true}, &created); err != nil {
		return nil, err
	}
	return c.InNamespace(created.Name), nil
}

// Namespaces lists every namespace and what it holds.
func (c *Client) Namespaces(ctx context.Context) ([]NamespaceInfo, error) {
	var answer struct{ Namespaces []NamespaceInfo }
	err := c.call(ctx, call{method: "GET", path: "/_test/namespaces", unscoped: true}, &answer)
	return answer.Namespaces, err
}

// DeleteNamespace deletes a namespace and everything in it ("": this client's own).
func (c *Client) DeleteNamespace(ctx context.Context, name string) error {
	if name == "" {
		name = c.Namespace
	}
	if name == "" {
		return errors.New("svcstub: DeleteNamespace: name a namespace (this client is in none)")
	}
	return c.call(ctx, call{method: "DELETE", path: "/_test/namespaces/" + url.PathEscape(name), unscoped: true}, nil)
}

// -- over HTTP ------------------------------------------------------------------------------

type call struct {
	method      string
	path        string
	query       url.Values
	body        any    // sent as JSON
	raw         []byte // sent as it is, with contentType
	contentType string
	unscoped    bool // to the stub itself rather than into the namespace (the namespace registry)
	waitMs      int
}

func (c *Client) call(ctx context.Context, request call, into any) error {
	target := c.URL
	if request.unscoped {
		target = c.BaseURL
	}
	target += request.path
	if len(request.query) > 0 {
		target += "?" + request.query.Encode()
	}
	var body io.Reader
	contentType := request.contentType
	if request.body != nil {
		encoded, err := json.Marshal(request.body)
		if err != nil {
			return fmt.Errorf("svcstub: %s: %w", request.path, err)
		}
		body, contentType = bytes.NewReader(encoded), "application/json"
	} else if request.raw != nil {
		body = bytes.NewReader(request.raw)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout+time.Duration(request.waitMs)*time.Millisecond)
	defer cancel()
	sent, err := http.NewRequestWithContext(ctx, request.method, target, body)
	if err != nil {
		return fmt.Errorf("svcstub: %w", err)
	}
	if contentType != "" {
		sent.Header.Set("Content-Type", contentType)
	}
	if c.ControlToken != "" {
		sent.Header.Set("Authorization", "Bearer "+c.ControlToken)
	}
	answer, err := c.httpClient().Do(sent)
	if err != nil {
		return &UnreachableError{URL: c.BaseURL, Reason: reasonOf(err), Err: err}
	}
	defer answer.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(answer.Body, 64<<20))
	if err != nil {
		return &UnreachableError{URL: c.BaseURL, Reason: reasonOf(err), Err: err}
	}
	if answer.StatusCode >= 300 {
		return stubError(answer.StatusCode, raw)
	}
	if page, ok := into.(*string); ok {
		*page = string(raw)
		return nil
	}
	if into == nil {
		return nil
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return &DecodeError{URL: c.BaseURL, Path: request.path, Err: err}
	}
	return nil
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return controlHTTP
}

func documentCall(path string, source any, merge bool) (call, error) {
	request := call{method: "POST", path: path}
	if merge {
		request.query = url.Values{"merge": {"true"}}
	}
	if file, ok := source.(string); ok {
		text, err := os.ReadFile(file)
		if err != nil {
			return request, fmt.Errorf("svcstub: fixtures: %w", err)
		}
		request.raw, request.contentType = text, "application/yaml" // JSON is YAML too
		return request, nil
	}
	request.body = source
	return request, nil
}

// waiting is how long the stub may wait (until ctx's deadline, DefaultWait if it has none),
// and the context of the long-poll: ctx's cancellation ends it, but not ctx's deadline, as the
// stub answers at that deadline with what did arrive, and that answer is what the caller needs.
func waiting(ctx context.Context) (context.Context, int, context.CancelFunc) {
	wait := DefaultWait
	if deadline, ok := ctx.Deadline(); ok {
		wait = time.Until(deadline)
	}
	waitMs := int(wait.Round(time.Millisecond) / time.Millisecond)
	waitMs = max(0, min(waitMs, maxWaitMs))
	poll, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel()
		}
	})
	return poll, waitMs, func() { stop(); cancel() }
}

func stubError(status int, raw []byte) error {
	var body struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &body) == nil {
		if code, ok := body.Error.(string); ok {
			return &StubError{Status: status, Code: code, Message: body.Message}
		}
	}
	text := string(raw)
	if len(text) > 200 {
		text = text[:200]
	}
	return &StubError{Status: status, Code: "ERROR", Message: strings.TrimSpace(text)}
}

// reasonOf is why a call got no answer, in a few words.
func reasonOf(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	}
	for { // the innermost error says it without the URL, which the message already has
		inner := errors.Unwrap(err)
		if inner == nil {
			return err.Error()
		}
		err = inner
	}
}
