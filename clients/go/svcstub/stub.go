package svcstub

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Stub is svc-stub for one test: a namespace of the test's own on the run's stub. Give the
// client under test URL; what the test arms, serves and records stays in the namespace, which
// is deleted when the test ends. Every method fails the test (at its own line) on an error.
type Stub struct {
	// URL is the base URL to give the client under test: BaseURL/ns/Namespace.
	URL string
	// BaseURL is the stub itself.
	BaseURL string
	// Namespace is the test's namespace: its name made safe, and a random suffix.
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
	client, err := NewClient(stubURL).CreateNamespace(ctx, namespaceName(tb.Name()), chosen.keys...)
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
		s.tb.Log(keepJournal(ctx, s.client, s.tb.Name()))
	}
	if err := s.client.DeleteNamespace(ctx, ""); err != nil {
		if stubErr, ok := err.(*StubError); !ok || stubErr.Status != 404 { // 404: the test deleted it
			s.tb.Errorf("svcstub: deleting the test's namespace: %v", err)
		}
	}
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
		if stubErr, ok := err.(*StubError); ok && stubErr.Status == 404 {
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

// Requests is the journal, oldest first; route keeps one route (AnyRoute: every one).
func (s *Stub) Requests(route Route) []Request {
	s.tb.Helper()
	requests, err := s.client.Requests(context.Background(), route)
	s.must(err)
	return requests
}

// Request is one request in full: its body, the answer it got, a curl line.
func (s *Stub) Request(seq int) RequestInFull {
	s.tb.Helper()
	request, err := s.client.Request(context.Background(), seq)
	s.must(err)
	return request
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
	return s.check(exposureMissing(s.Recorded().Exposures(), flagKey, targetingKey, variant))
}

// AssertNoRequest checks no request went to route; if one did, the test fails listing them.
func (s *Stub) AssertNoRequest(route Route) bool {
	s.tb.Helper()
	return s.check(unexpectedRequests(s.Requests(route), route))
}

// AssertNoWarnings checks no request used a key where the service would refuse it.
func (s *Stub) AssertNoWarnings() bool {
	s.tb.Helper()
	return s.check(warnedRequests(s.Requests(AnyRoute)))
}

// AssertNoRetryBeforeRetryAfter checks no request to route came back sooner after an answer
// than its Retry-After asked.
func (s *Stub) AssertNoRetryBeforeRetryAfter(route Route) bool {
	s.tb.Helper()
	return s.check(earlyRetries(s.Requests(route), route))
}

// GapsMs is the time in ms between each request to route and the next.
func (s *Stub) GapsMs(route Route) []float64 {
	s.tb.Helper()
	return gapsMs(s.Requests(route))
}

func (s *Stub) check(failure string) bool {
	s.tb.Helper()
	if failure != "" {
		s.tb.Error(failure)
		return false
	}
	return true
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// namespaceName is readable in /_test/namespaces and unique across tests and runs: at most 64 characters.
func namespaceName(testName string) string {
	readable := strings.Trim(unsafe.ReplaceAllString(testName, "-"), "-._")
	if len(readable) > 55 {
		readable = strings.TrimRight(readable[:55], "-._")
	}
	if readable == "" {
		readable = "test"
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	return readable + "-" + hex.EncodeToString(suffix)
}

// keepJournal writes the failed test's namespace as the inspector page, and says where.
func keepJournal(ctx context.Context, client *Client, testName string) string {
	readable := strings.Trim(unsafe.ReplaceAllString(testName, "_"), "_")
	if len(readable) > 120 {
		readable = readable[:120]
	}
	sum := sha256.Sum256([]byte(testName))
	directory := os.Getenv(JournalVariable)
	if directory == "" {
		directory = "svc-stub-journal"
	}
	directory, _ = filepath.Abs(directory)
	page, err := client.Snapshot(ctx)
	if err == nil {
		err = os.MkdirAll(directory, 0o755)
	}
	path := ""
	for attempt := 1; err == nil; attempt++ { // another run of the same test (-count) keeps its own
		name := fmt.Sprintf("%s-%s.html", readable, hex.EncodeToString(sum[:4]))
		if attempt > 1 {
			name = fmt.Sprintf("%s-%s-%d.html", readable, hex.EncodeToString(sum[:4]), attempt)
		}
		path = filepath.Join(directory, name)
		var file *os.File
		file, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if os.IsExist(err) {
			err = nil
			continue
		}
		if err == nil {
			_, err = file.WriteString(page)
			file.Close()
			break
		}
	}
	if err != nil {
		return "svc-stub journal not written: " + err.Error()
	}
	return fmt.Sprintf("svc-stub journal of this test: %s (open it in a browser)", path)
}
