// What was sent, waited for with the stub's long-poll and asserted, through real requests; and
// the fixtures and management plane a test serves.
package svcstub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

// childVariable names the child test a parent test runs in a `go test` of its own.
const childVariable = "SVCSTUB_CHILD"

var exposure = svcstub.Event{"type": "exposure", "targetingKey": "user-1", "flagKey": "checkout-v2", "variant": "treatment-b", "value": "treatment-b"}

// exposureJSON is exposure as a failure message shows it.
const exposureJSON = `[
  {
    "flagKey": "checkout-v2",
    "targetingKey": "user-1",
    "type": "exposure",
    "value": "treatment-b",
    "variant": "treatment-b"
  }
]`

// clientAnswer is what a client got from one request to the stub.
type clientAnswer struct {
	status int
	raw    []byte
}

// sendAsClient POSTs body as JSON to base+path with a server key, as a client library does.
// It may run in any goroutine.
func sendAsClient(base, path, authorization string, body any) (clientAnswer, error) {
	encoded, err := json.Marshal(body)
	if err != nil {
		return clientAnswer{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	method := http.MethodPost
	if body == nil {
		method, encoded = http.MethodGet, nil
	}
	request, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(encoded))
	if err != nil {
		return clientAnswer{}, err
	}
	request.Header.Set("Authorization", authorization)
	if body != nil {
		request.Header.Set("Content-Type", "application/json")
	}
	answer, err := http.DefaultClient.Do(request)
	if err != nil {
		return clientAnswer{}, err
	}
	defer answer.Body.Close()
	raw, err := io.ReadAll(answer.Body)
	return clientAnswer{answer.StatusCode, raw}, err
}

const goServerKey = "Bearer project-api-key_go"

// postEvaluate is POST {base}/v1/flags/evaluate for user-1 and these flags.
func postEvaluate(t testing.TB, base string, flagKeys ...string) clientAnswer {
	t.Helper()
	answer, err := sendAsClient(base, "/v1/flags/evaluate", goServerKey, map[string]any{"targetingKey": "user-1", "flagKeys": flagKeys})
	if err != nil {
		t.Fatalf("evaluate: %v", err)
	}
	return answer
}

// postCapture is POST {base}/v1/capture with these events; it must be accepted.
func postCapture(t testing.TB, base string, events ...svcstub.Event) {
	t.Helper()
	answer, err := sendAsClient(base, "/v1/capture", goServerKey, map[string]any{"events": events})
	if err != nil || answer.status != 200 {
		t.Fatalf("capture: %d %s %v", answer.status, answer.raw, err)
	}
}

// valueOf is the value base serves for flagKey.
func valueOf(t testing.TB, base, flagKey string) any {
	t.Helper()
	answer := postEvaluate(t, base, flagKey)
	var body struct{ Decisions []struct{ Value any } }
	if err := json.Unmarshal(answer.raw, &body); err != nil || answer.status != 200 || len(body.Decisions) != 1 {
		t.Fatalf("evaluate %s: %d %s", flagKey, answer.status, answer.raw)
	}
	return body.Decisions[0].Value
}

// within is a context whose deadline is d from now.
func within(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// -- waits ----------------------------------------------------------------------------------

func TestAWaitReturnsAsSoonAsALateCaptureArrives(t *testing.T) {
	stub := svcstub.New(t)
	sent := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		answer, err := sendAsClient(stub.URL, "/v1/capture", goServerKey, map[string]any{"events": []svcstub.Event{exposure}})
		if err == nil && answer.status != 200 {
			err = fmt.Errorf("capture: %d %s", answer.status, answer.raw)
		}
		sent <- err
	}()
	started := time.Now()
	events := stub.WaitForSvcEvents(within(t, time.Minute), 1)
	took := time.Since(started)
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	// it waited for the capture; had it run out, it would have failed the test with what arrived
	if took < 250*time.Millisecond {
		t.Errorf("the wait took %s; the capture came after 300ms", took)
	}
	if !reflect.DeepEqual(events, []svcstub.Event{exposure}) {
		t.Errorf("events = %v, want the exposure sent", events)
	}
}

func TestAWaitThatRunsOutSaysWhatDidArrive(t *testing.T) {
	stub := svcstub.New(t)
	postCapture(t, stub.URL, exposure)
	events, err := stub.Client().WaitForRecorded(within(t, 200*time.Millisecond), "svcEvents", 2)
	var timeout *svcstub.WaitTimeoutError
	if !errors.As(err, &timeout) {
		t.Fatalf("err = %T %v, want a *WaitTimeoutError", err, err)
	}
	if want := "waited 200ms for 2 svcEvents, got 1:\n" + exposureJSON; err.Error() != want {
		t.Errorf("err =\n%s\nwant\n%s", err, want)
	}
	if len(events) != 1 {
		t.Errorf("events = %v, want what did arrive", events)
	}
}

func TestWaitForRequestsCountsOneRoute(t *testing.T) {
	stub := svcstub.New(t)
	postCapture(t, stub.URL, exposure)
	postEvaluate(t, stub.URL, "checkout-v2")
	requests := stub.WaitForRequests(within(t, time.Minute), 1, svcstub.RouteEvaluate)
	if len(requests) != 1 || requests[0].Path != "/v1/flags/evaluate" || requests[0].StatusOr() != 200 {
		t.Errorf("requests to evaluate = %+v", requests)
	}
	if all := stub.WaitForRequests(within(t, time.Minute), 2, svcstub.AnyRoute); len(all) != 2 {
		t.Errorf("requests to any route = %+v, want the capture and the evaluate", all)
	}
	started := time.Now()
	_, err := stub.Client().WaitForRequests(within(t, 200*time.Millisecond), 2, svcstub.RouteEvaluate)
	if took := time.Since(started); took < 190*time.Millisecond {
		t.Errorf("the wait ran out after %s, not 200ms", took)
	}
	want := regexp.MustCompile(`^waited 200ms for 2 requests to evaluate, got 1:\n  #\d+ POST /v1/flags/evaluate -> 200$`)
	var timeout *svcstub.WaitTimeoutError
	if !errors.As(err, &timeout) || !want.MatchString(err.Error()) {
		t.Errorf("err = %T %v, want a *WaitTimeoutError matching %s", err, err, want)
	}

	go func() {
		time.Sleep(300 * time.Millisecond)
		_, _ = sendAsClient(stub.URL, "/v1/flags/evaluate", goServerKey, map[string]any{"targetingKey": "user-1", "flagKeys": []string{}})
	}()
	started = time.Now()
	if late := stub.WaitForRequests(within(t, time.Minute), 2, svcstub.RouteEvaluate); len(late) != 2 {
		t.Errorf("requests to evaluate = %+v, want the late one too", late)
	}
	if took := time.Since(started); took < 250*time.Millisecond {
		t.Errorf("the wait took %s; the evaluate came after 300ms", took)
	}
}

func TestAPreflightCountsOnlyWhenAskedFor(t *testing.T) {
	stub := svcstub.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	preflight, err := http.NewRequestWithContext(ctx, http.MethodOptions, stub.URL+"/v1/flags/evaluate", nil)
	if err != nil {
		t.Fatal(err)
	}
	preflight.Header.Set("Origin", "http://localhost:5173")
	preflight.Header.Set("Access-Control-Request-Method", "POST")
	answer, err := http.DefaultClient.Do(preflight)
	if err != nil {
		t.Fatal(err)
	}
	answer.Body.Close()

	if listed := stub.WaitForRequests(within(t, time.Minute), 1, svcstub.RoutePreflight); len(listed) != 1 {
		t.Errorf("preflights = %+v", listed)
	}
	_, err = stub.Client().WaitForRequests(within(t, 200*time.Millisecond), 1, svcstub.AnyRoute)
	want := regexp.MustCompile(`^waited 200ms for 1 requests to any route, got 0:\n  #\d+ OPTIONS /v1/flags/evaluate -> 204$`)
	if !want.MatchString(fmt.Sprint(err)) {
		t.Errorf("a client's requests after a preflight alone: %v\nwant a match of %s", err, want)
	}
}

// -- assertions -----------------------------------------------------------------------------

func TestPassingAssertionsPass(t *testing.T) {
	stub := svcstub.New(t)
	postCapture(t, stub.URL, exposure)
	postEvaluate(t, stub.URL, "checkout-v2")
	for name, passed := range map[string]bool{
		"AssertExposure":                stub.AssertExposure("checkout-v2", "user-1", "treatment-b"),
		"AssertExposure, any variant":   stub.AssertExposure("checkout-v2", "user-1", ""),
		"AssertNoRequest":               stub.AssertNoRequest(svcstub.RouteRegister),
		"AssertNoWarnings":              stub.AssertNoWarnings(),
		"AssertNoRetryBeforeRetryAfter": stub.AssertNoRetryBeforeRetryAfter(svcstub.RouteEvaluate),
	} {
		if !passed {
			t.Errorf("%s returned false", name)
		}
	}
}

// TestChildFailingAssertions fails on purpose: TestFailingAssertionsReadWell runs it in a `go
// test` of its own and reads what it printed.
func TestChildFailingAssertions(t *testing.T) {
	if os.Getenv(childVariable) != "journal" {
		t.Skip("fails on purpose; TestFailingAssertionsReadWell runs it")
	}
	stub := svcstub.New(t) // the child's own
	postCapture(t, stub.URL, exposure)
	stub.AssertExposure("checkout-v2", "user-2", "")
	stub.AssertNoRequest(svcstub.RouteCapture)
}

func TestFailingAssertionsReadWell(t *testing.T) {
	t.Parallel()
	stubURL, err := svcstub.RunURL()
	if err != nil {
		t.Fatal(err)
	}
	journals := t.TempDir()
	output, err := svcstub.GoTest(t, ".", map[string]string{
		childVariable: "journal", svcstub.URLVariable: stubURL, svcstub.JournalVariable: journals,
	}, "-run", "^TestChildFailingAssertions$", "-v", ".")
	if err == nil || !strings.Contains(output, "--- FAIL: TestChildFailingAssertions") {
		t.Fatalf("the child test did not fail (%v):\n%s", err, output)
	}
	for _, want := range []string{
		// the stub's verdicts, word for word, at the test's lines
		fmt.Sprintf("    journal_test.go:%d: no exposure of checkout-v2 for user-2; exposures recorded:\n"+
			"          checkout-v2 for user-1: variant treatment-b\n",
			lineOf(t, "journal_test.go", `stub.AssertExposure("checkout-v2", "user-2", "")`)),
		fmt.Sprintf("    journal_test.go:%d: expected no request to route 'capture', got 1:\n",
			lineOf(t, "journal_test.go", `stub.AssertNoRequest(svcstub.RouteCapture)`)),
		// logged when the test has ended, at the line that gave it its namespace
		fmt.Sprintf("    journal_test.go:%d: svc-stub journal of this test: ",
			lineOf(t, "journal_test.go", `stub := svcstub.New(t) // the child's own`)),
	} {
		if !strings.Contains(output, want) {
			t.Errorf("the child's output has no %q:\n%s", want, output)
		}
	}
	if !regexp.MustCompile(`\n {10}#\d+ POST /v1/capture -> 200\n`).MatchString(output) {
		t.Errorf("the child's output does not list its capture:\n%s", output)
	}

	page := journalNamed(t, output)
	if want := filepath.Join(journals, "github.com/svc-stub/svc-stub/clients/go/svcstub"); filepath.Dir(page) != want {
		t.Errorf("the journal is %s, not in %s/<package path>: %s", page, svcstub.JournalVariable, want)
	}
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("the journal named: %v", err)
	}
	if !regexp.MustCompile(`(?i)^<!doctype html>`).Match(text) || !bytes.Contains(text, []byte("/v1/capture")) {
		t.Errorf("the journal is not the inspector page listing the child's capture:\n%.500s", text)
	}

	namespaces, err := svcstub.NewClient(stubURL).Namespaces(within(t, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	childs := strings.TrimSuffix(filepath.Base(page), ".html") // the journal is named after it
	for _, namespace := range namespaces {
		if namespace.Name == childs {
			t.Errorf("the child's namespace %s is still there", namespace.Name)
		}
	}
}

// journalNamed is the journal a child test's output names.
func journalNamed(t *testing.T, output string) string {
	t.Helper()
	named := regexp.MustCompile(`svc-stub journal of this test: (.+) \(open it in a browser\)`).FindStringSubmatch(output)
	if named == nil {
		t.Fatalf("the child's output names no journal:\n%s", output)
	}
	return named[1]
}

// A failed test's journal goes to the temporary directory, never among the sources, and a run
// that writes one removes the journals of earlier runs.
func TestAFailedTestsJournalIsATemporaryFileOfTheLastRun(t *testing.T) {
	t.Parallel()
	stubURL, err := svcstub.RunURL()
	if err != nil {
		t.Fatal(err)
	}
	temporary := t.TempDir()
	failing := func() string {
		output, err := svcstub.GoTest(t, ".", map[string]string{
			childVariable: "journal", svcstub.URLVariable: stubURL, svcstub.JournalVariable: "", "TMPDIR": temporary,
		}, "-run", "^TestChildFailingAssertions$", "-v", ".")
		if err == nil {
			t.Fatalf("the child test did not fail:\n%s", output)
		}
		return journalNamed(t, output)
	}

	first := failing()
	directory := filepath.Join(temporary, "svc-stub-journal", "github.com/svc-stub/svc-stub/clients/go/svcstub")
	if filepath.Dir(first) != directory {
		t.Errorf("the journal is %s, not in %s", first, directory)
	}
	earlier := filepath.Join(directory, "TestOfAnEarlierRun-0123abcd.html")
	if err := os.WriteFile(earlier, []byte("<!doctype html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	second := failing()
	if _, err := os.Stat(second); err != nil {
		t.Errorf("the second run's journal: %v", err)
	}
	for _, gone := range []string{first, earlier} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there after another run wrote its journal (%v)", gone, err)
		}
	}
}

// -- the journal in full ----------------------------------------------------------------------

func TestARecordedBodyReadsAsJSONInOneCall(t *testing.T) {
	stub := svcstub.New(t)
	postCapture(t, stub.URL, exposure)

	var capture struct{ Events []svcstub.Event }
	if err := stub.Requests(svcstub.RouteCapture)[0].JSON(&capture); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(capture.Events, []svcstub.Event{exposure}) {
		t.Errorf("the capture's events = %v, want the exposure sent", capture.Events)
	}

	_, _ = sendAsClient(stub.URL, "/v1/projects", goServerKey, nil) // a GET: no body
	get := stub.WaitForRequests(within(t, time.Minute), 1, svcstub.RouteProjects)[0]
	var nothing any
	if err := get.JSON(&nothing); get.Text() != "" || err == nil || err.Error() != fmt.Sprintf("svcstub: request #%d (GET /v1/projects) has no body", get.Seq) {
		t.Errorf("a GET's body: %q, JSON: %v", get.Text(), err)
	}
	var wrong []int
	if err := stub.Requests(svcstub.RouteCapture)[0].JSON(&wrong); err == nil || !strings.HasPrefix(err.Error(), "svcstub: the body of request #") {
		t.Errorf("a body into the wrong type: %v", err)
	}
}

// A delayed request is listed where it arrived, before a quick one that came after it and ended
// first (and not at all while it is in flight).
func TestRequestsAreListedInArrivalOrder(t *testing.T) {
	stub := svcstub.New(t)
	stub.Arm(svcstub.Fault{Mode: svcstub.ModeDelay, Delay: time.Minute, ApplyTo: []svcstub.Selector{svcstub.OnEvaluate}, TTLRequests: 1})
	ctx, giveUp := context.WithCancel(context.Background())
	defer giveUp()
	delayed := make(chan error, 1)
	go func() {
		request, _ := http.NewRequestWithContext(ctx, "POST", stub.URL+"/v1/flags/evaluate", strings.NewReader(`{"targetingKey": "user-1"}`))
		request.Header.Set("Authorization", goServerKey)
		_, err := http.DefaultClient.Do(request)
		delayed <- err
	}()
	hangGuard := time.After(time.Minute)
	for len(stub.Armed()) != 0 { // until the delay fires: the request has arrived
		select {
		case err := <-delayed:
			t.Fatalf("the delayed request ended before its fault fired: %v", err)
		case <-hangGuard:
			t.Fatal("the delay fault did not fire within a minute")
		case <-time.After(10 * time.Millisecond):
		}
	}
	postEvaluate(t, stub.URL, "checkout-v2")
	if listed := stub.WaitForRequests(within(t, time.Minute), 1, svcstub.RouteEvaluate); len(listed) != 1 || listed[0].StatusOr() != 200 {
		t.Fatalf("with the delayed request in flight, the journal lists %+v; want the quick one alone", listed)
	}
	giveUp()
	<-delayed

	listed := stub.WaitForRequests(within(t, time.Minute), 2, svcstub.RouteEvaluate)
	if len(listed) != 2 || listed[0].Fault == nil || listed[0].Fault.Mode != svcstub.ModeDelay || listed[1].StatusOr() != 200 || listed[0].Seq > listed[1].Seq {
		t.Errorf("the journal lists %+v; want the delayed request, then the quick one", listed)
	}
}

func TestTheOfflineURLRefusesAConnection(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)
	offline := stub.OfflineURL()
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+$`).MatchString(offline) {
		t.Errorf("OfflineURL() = %s", offline)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	request, _ := http.NewRequestWithContext(ctx, "GET", offline+"/v1/flags", nil)
	answer, err := http.DefaultClient.Do(request)
	if err == nil {
		answer.Body.Close()
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("a client's GET %s: %v, want the connection refused", offline, err)
	}
	if again := stub.OfflineURL(); again != offline {
		t.Errorf("OfflineURL() is %s, then %s", offline, again)
	}
}

func TestARequestInFull(t *testing.T) {
	stub := svcstub.New(t)
	postEvaluate(t, stub.URL, "checkout-v2")
	listed := stub.Requests(svcstub.RouteEvaluate)
	if len(listed) != 1 {
		t.Fatalf("requests to evaluate = %+v", listed)
	}
	full := stub.Request(listed[0].Seq)
	if !reflect.DeepEqual(full, listed[0]) {
		t.Errorf("Request(%d) = %+v\nwant it as listed: %+v", listed[0].Seq, full, listed[0])
	}
	if full.Text() != `{"flagKeys":["checkout-v2"],"targetingKey":"user-1"}` {
		t.Errorf("body = %q", full.Text())
	}
	if full.Answer == nil || full.Answer.Status != 200 || !strings.Contains(full.Curl, "curl") {
		t.Errorf("answer = %+v, curl = %q", full.Answer, full.Curl)
	}
	if got := full.Headers["authorization"]; got != "Bearer project-api-key_[redacted]" {
		t.Errorf("authorization = %q, want the key redacted", got)
	}
	if page, err := stub.Client().Snapshot(within(t, time.Minute)); err != nil || !strings.Contains(page, "/v1/flags/evaluate") {
		t.Errorf("snapshot: %v\n%.300s", err, page)
	}
	if recorded := stub.Recorded(); len(recorded.Events)+len(recorded.SvcEvents)+len(recorded.Targets) != 0 {
		t.Errorf("recorded = %+v, want nothing: an evaluate is not kept", recorded)
	}
}

// -- fixtures and the management plane ----------------------------------------------------------

func TestFixturesFromFilesAndMerged(t *testing.T) {
	stub := svcstub.New(t)
	if flags := stub.SetFixtures("testdata/beta.yaml"); !reflect.DeepEqual(flags, []string{"beta-banner"}) {
		t.Errorf("SetFixtures(beta.yaml) = %q", flags)
	}
	if flags := stub.MergeFixtures("testdata/pricing.json"); !reflect.DeepEqual(flags, []string{"beta-banner", "pricing-layout"}) {
		t.Errorf("MergeFixtures(pricing.json) = %q", flags)
	}
	merged := stub.MergeFixtures(map[string]any{"flags": map[string]any{"pricing-layout": map[string]any{"type": "string", "value": "list"}}})
	if !reflect.DeepEqual(merged, []string{"beta-banner", "pricing-layout"}) {
		t.Errorf("MergeFixtures(a map) = %q", merged)
	}
	for flag, want := range map[string]any{"beta-banner": true, "pricing-layout": "list"} {
		if got := valueOf(t, stub.URL, flag); got != want {
			t.Errorf("%s = %v, want %v", flag, got, want)
		}
	}
	if _, err := stub.Client().SetFixtures(within(t, time.Minute), "testdata/missing.yaml", false); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("a missing file: err = %v", err)
	}
}

func TestWithFixturesServesThemFromTheStart(t *testing.T) {
	stub := svcstub.New(t, svcstub.WithFixtures("testdata/beta.yaml", map[string]any{
		"flags": map[string]any{"go-flag": map[string]any{"type": "string", "value": "a"}},
	}))
	for flag, want := range map[string]any{"beta-banner": true, "go-flag": "a"} {
		if got := valueOf(t, stub.URL, flag); got != want {
			t.Errorf("%s = %v, want %v", flag, got, want)
		}
	}
}

// acme is a fixture file's management: section, as a Terraform provider's tests seed it.
var acme = map[string]any{"orgs": map[string]any{"org_acme": map[string]any{
	"keys":     []any{map[string]any{"key": "svc_org_acme_admin", "scope": "org:management"}},
	"projects": []any{map[string]any{"projectId": "proj_shop", "name": "Shop", "slug": "shop"}},
}}}

func TestSeedManagementServesTheManagementPlane(t *testing.T) {
	stub := svcstub.New(t)
	state := stub.SeedManagement(acme)
	if orgs, _ := state["orgs"].(map[string]any); len(orgs) != 1 || orgs["org_acme"] == nil {
		t.Fatalf("SeedManagement = %v, want org_acme alone", state)
	}
	if !reflect.DeepEqual(stub.Management(), state) {
		t.Errorf("Management() = %v\nwant what SeedManagement answered: %v", stub.Management(), state)
	}

	answer, err := sendAsClient(stub.URL, "/v1/projects", "Bearer svc_org_acme_admin", nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed struct {
		Projects []struct{ ProjectID, Name, Slug string }
	}
	if answer.status != 200 || json.Unmarshal(answer.raw, &listed) != nil || len(listed.Projects) != 1 ||
		listed.Projects[0].ProjectID != "proj_shop" || listed.Projects[0].Slug != "shop" {
		t.Errorf("GET /v1/projects = %d %s, want the seeded project", answer.status, answer.raw)
	}
	if requests := stub.Requests(svcstub.RouteProjects); len(requests) != 1 || requests[0].Route != svcstub.RouteProjectsList {
		t.Errorf("requests to projects = %+v, want one projects.list", requests)
	}

	// The seed is the test's own: the stub's default namespace does not know the key.
	if answer, err := sendAsClient(stub.BaseURL, "/v1/projects", "Bearer svc_org_acme_admin", nil); err != nil || answer.status != 401 {
		t.Errorf("the default namespace: %d %s %v, want 401", answer.status, answer.raw, err)
	}
}

// lineOf is the number of the one line of file that starts with code.
func lineOf(t *testing.T, file, code string) int {
	t.Helper()
	found := 0
	for i, line := range strings.Split(readSource(t, file), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), code) {
			if found != 0 {
				t.Fatalf("%s: two lines start with %s", file, code)
			}
			found = i + 1
		}
	}
	if found == 0 {
		t.Fatalf("%s: no line starts with %s", file, code)
	}
	return found
}
