package svcstub

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Stub is svc-stub for one test: a namespace of the test's own on the run's stub. Give the
// client under test URL; what the test arms, serves and records stays in the namespace, which
// is deleted when the test ends. Every method fails the test (at its own line) on an error.
type Stub struct {
	// URL is the base URL to give the client under test: BaseURL/ns/Namespace.
	URL string
	// BaseURL is the stub itself.
	BaseURL string
	// Namespace is the test's namespace, named by the stub after the test.
	Namespace string

	tb     testing.TB
	client *Client
}

// Option sets up a test's namespace.
type Option func(*setup)

type setup struct {
	fixtures []any
	keys     []string
}

// WithFixtures serves these fixtures in the test's namespace: documents (a map or a struct)
// or paths of YAML or JSON files; the first replaces the served set, later ones overlay it key
// by key.
func WithFixtures(sources ...any) Option {
	return func(s *setup) { s.fixtures = append(s.fixtures, sources...) }
}

// WithKeys binds keys to the test's namespace: requests that name no namespace but present one
// are served in it (a key binds to one namespace at a time: parallel tests need keys of their own).
func WithKeys(keys ...string) Option {
	return func(s *setup) { s.keys = append(s.keys, keys...) }
}

// New gives the test a namespace of its own on the run's stub (RunURL), set up by options and
// deleted when the test ends; if the test failed, its journal is written first and t.Log names it.
func New(tb testing.TB, options ...Option) *Stub {
	tb.Helper()
	var chosen setup
	for _, option := range options {
		option(&chosen)
	}
	stubURL, err := RunURL()
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	client, err := NewClient(stubURL).CreateNamespace(ctx, tb.Name(), chosen.keys...)
	if err != nil {
		tb.Fatal(fatalMessage(err, ""))
	}
	stub := &Stub{URL: client.URL, BaseURL: client.BaseURL, Namespace: client.Namespace, tb: tb, client: client}
	tb.Cleanup(stub.close)
	for i, source := range chosen.fixtures {
		if _, err := client.SetFixtures(ctx, source, i > 0); err != nil {
			tb.Fatal(fatalMessage(err, "fixtures: "))
		}
	}
	return stub
}

// Client is the stub's control client in this test's namespace, whose methods return errors.
func (s *Stub) Client() *Client { return s.client }

func (s *Stub) close() {
	s.tb.Helper() // what it logs points at the test's New(t)
	ctx := context.Background()
	if s.tb.Failed() {
		s.tb.Log(keepJournal(ctx, s.client))
	}
	if err := s.client.DeleteNamespace(ctx, ""); err != nil {
		if !isStatus(err, 404) { // 404: the test deleted it
			s.tb.Errorf("svcstub: deleting the test's namespace: %v", err)
		}
	}
}

// isStatus: err is the stub's refusal with this status.
func isStatus(err error, status int) bool {
	var refused *StubError
	return errors.As(err, &refused) && refused.Status == status
}

func (s *Stub) must(err error) {
	s.tb.Helper()
	if err != nil {
		s.tb.Fatal(fatalMessage(err, ""))
	}
}

// fatalMessage is err's message as svcstub's, about what (unless err already says both).
func fatalMessage(err error, what string) string {
	message := err.Error()
	if strings.HasPrefix(message, "svcstub: ") {
		return message
	}
	return "svcstub: " + what + message
}

// Arm arms a fault for the rest of the test (or for its TTLRequests).
func (s *Stub) Arm(f Fault) ArmedFault {
	s.tb.Helper()
	armed, err := s.client.Arm(context.Background(), f)
	s.must(err)
	return armed
}

// WithFault runs block with a fault armed, then disarms that fault alone.
func (s *Stub) WithFault(f Fault, block func()) {
	s.tb.Helper()
	armed := s.Arm(f)
	defer func() {
		err := s.client.Disarm(context.Background(), armed.ID)
		if isStatus(err, 404) {
			return // it ran out by itself
		}
		s.must(err)
	}()
	block()
}

// Armed lists the faults armed in the test's namespace.
func (s *Stub) Armed() []ArmedFault {
	s.tb.Helper()
	armed, err := s.client.Armed(context.Background())
	s.must(err)
	return armed
}

// ClearFaults disarms every fault of the test's namespace.
func (s *Stub) ClearFaults() {
	s.tb.Helper()
	s.must(s.client.ClearFaults(context.Background()))
}

// SetFixtures serves these fixtures instead (a document, or a YAML or JSON file's path); the flag keys served.
func (s *Stub) SetFixtures(source any) []string {
	s.tb.Helper()
	flags, err := s.client.SetFixtures(context.Background(), source, false)
	s.must(err)
	return flags
}

// MergeFixtures serves these fixtures over the served ones, key by key; the flag keys served.
func (s *Stub) MergeFixtures(source any) []string {
	s.tb.Helper()
	flags, err := s.client.SetFixtures(context.Background(), source, true)
	s.must(err)
	return flags
}

// SeedManagement seeds the management plane (organisations, keys, sessions, projects): a
// fixture file's management: section as a document, or a file holding one. It returns the
// management plane as it is now.
func (s *Stub) SeedManagement(source any) map[string]any {
	s.tb.Helper()
	state, err := s.client.SeedManagement(context.Background(), source, false)
	s.must(err)
	return state
}

// Management is the management plane as it is now: every organisation, no key or token.
func (s *Stub) Management() map[string]any {
	s.tb.Helper()
	state, err := s.client.Management(context.Background())
	s.must(err)
	return state
}

// SetRateLimit limits every key to perSecond requests a second (0: no limit), and some keys to their own.
func (s *Stub) SetRateLimit(perSecond float64, perKey map[string]float64) {
	s.tb.Helper()
	s.must(s.client.SetRateLimit(context.Background(), perSecond, perKey))
}

// Recorded is everything clients sent to be kept.
func (s *Stub) Recorded() Recorded {
	s.tb.Helper()
	recorded, err := s.client.Recorded(context.Background())
	s.must(err)
	return recorded
}

// Requests is the journal in arrival order (by Seq), each request with its body; route keeps
// one route (AnyRoute: every one). A request in flight is listed once it ends.
func (s *Stub) Requests(route Route) []Request {
	s.tb.Helper()
	requests, err := s.client.Requests(context.Background(), route)
	s.must(err)
	return requests
}

// Request is one request of the journal.
func (s *Stub) Request(seq int) Request {
	s.tb.Helper()
	request, err := s.client.Request(context.Background(), seq)
	s.must(err)
	return request
}

// OfflineURL is an address where nothing listens, for a test of the client offline: a
// connection to it is refused at once, for as long as the stub runs.
func (s *Stub) OfflineURL() string {
	s.tb.Helper()
	address, err := s.client.Offline(context.Background())
	s.must(err)
	return address
}

// WaitForEvents waits (the stub's long-poll) until n vendor /batch events are recorded, or ctx's
// deadline passes (DefaultWait without one); then the test fails with what did arrive.
func (s *Stub) WaitForEvents(ctx context.Context, n int) []Event {
	s.tb.Helper()
	events, err := s.client.WaitForRecorded(ctx, "events", n)
	s.must(err)
	return events
}

// WaitForSvcEvents waits until n /v1/capture events are recorded.
func (s *Stub) WaitForSvcEvents(ctx context.Context, n int) []Event {
	s.tb.Helper()
	events, err := s.client.WaitForRecorded(ctx, "svcEvents", n)
	s.must(err)
	return events
}

// WaitForTargets waits until n /v1/targets/register bodies are recorded.
func (s *Stub) WaitForTargets(ctx context.Context, n int) []Event {
	s.tb.Helper()
	targets, err := s.client.WaitForRecorded(ctx, "targets", n)
	s.must(err)
	return targets
}

// WaitForRequests waits until n requests to route (AnyRoute: any) are in the journal.
func (s *Stub) WaitForRequests(ctx context.Context, n int, route Route) []Request {
	s.tb.Helper()
	requests, err := s.client.WaitForRequests(ctx, n, route)
	s.must(err)
	return requests
}

// AssertExposure checks an exposure of flagKey for targetingKey (with variant, unless "") was
// captured; if not, the test fails with the exposures recorded.
func (s *Stub) AssertExposure(flagKey, targetingKey, variant string) bool {
	s.tb.Helper()
	parameters := url.Values{"flagKey": {flagKey}, "targetingKey": {targetingKey}}
	if variant != "" {
		parameters.Set("variant", variant)
	}
	return s.assert("exposure", parameters)
}

// AssertNoRequest checks no request went to route; if one did, the test fails listing them.
func (s *Stub) AssertNoRequest(route Route) bool {
	s.tb.Helper()
	return s.assert("no-request", url.Values{"route": {string(route)}})
}

// AssertNoWarnings checks no request used a key where the service would refuse it.
func (s *Stub) AssertNoWarnings() bool {
	s.tb.Helper()
	return s.assert("no-warnings", nil)
}

// AssertNoRetryBeforeRetryAfter checks no request to route (AnyRoute: to each route) came back
// sooner after an answer than its Retry-After allowed.
func (s *Stub) AssertNoRetryBeforeRetryAfter(route Route) bool {
	s.tb.Helper()
	parameters := url.Values{}
	if route != AnyRoute {
		parameters.Set("route", string(route))
	}
	return s.assert("retry-after", parameters)
}

// assert fails the test with the stub's words when its check does not hold.
func (s *Stub) assert(check string, parameters url.Values) bool {
	s.tb.Helper()
	verdict, err := s.client.Check(context.Background(), check, parameters)
	s.must(err)
	if !verdict.Passed {
		s.tb.Error(verdict.Message)
	}
	return verdict.Passed
}

// Gaps is the time between each request to route (AnyRoute: any) and the next, by their
// arrival on the stub's clock: what a client's backoff or polling interval was.
func (s *Stub) Gaps(route Route) []time.Duration {
	s.tb.Helper()
	return gaps(s.Requests(route))
}

// keepJournal writes the failed test's namespace as the inspector page, and says where.
func keepJournal(ctx context.Context, client *Client) string {
	page, err := client.Snapshot(ctx)
	directory := ""
	if err == nil {
		directory, err = journalDirectory()
	}
	file := filepath.Join(directory, client.Namespace+".html") // the test's name, made distinct
	if err == nil {
		err = os.WriteFile(file, []byte(page), 0o644)
	}
	if err != nil {
		return "svc-stub journal not written: " + err.Error()
	}
	return fmt.Sprintf("svc-stub journal of this test: %s (open it in a browser)", file)
}

var journals struct {
	once      sync.Once
	directory string
	err       error
}

// journalDirectory is where this package's journals go: its own folder of SVC_STUB_JOURNAL_DIR
// (default svc-stub-journal in the temporary directory), emptied of earlier runs' journals
// when this run writes its first.
func journalDirectory() (string, error) {
	journals.once.Do(func() {
		base := os.Getenv(JournalVariable)
		if base == "" {
			base = filepath.Join(os.TempDir(), "svc-stub-journal")
		}
		directory, err := filepath.Abs(filepath.Join(base, filepath.FromSlash(testedPackage())))
		if err == nil {
			err = os.MkdirAll(directory, 0o755)
		}
		earlier, _ := filepath.Glob(filepath.Join(directory, "*.html"))
		for _, page := range earlier {
			_ = os.Remove(page)
		}
		journals.directory, journals.err = directory, err
	})
	return journals.directory, journals.err
}

var moduleLine = regexp.MustCompile(`(?m)^module\s+"?([^"\s]+)`)

// testedPackage is the import path of the package being tested: `go test` runs its tests in
// its folder, below its module's go.mod.
func testedPackage() string {
	here, _ := os.Getwd()
	for folder := here; filepath.Dir(folder) != folder; folder = filepath.Dir(folder) {
		text, _ := os.ReadFile(filepath.Join(folder, "go.mod"))
		if module := moduleLine.FindSubmatch(text); module != nil {
			below, _ := filepath.Rel(folder, here)
			return path.Join(string(module[1]), filepath.ToSlash(below))
		}
	}
	return filepath.Base(here)
}
