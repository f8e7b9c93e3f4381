// Issue #47's points, each through the real stub: a Transport that faults one client, a Request
// that prints as one line, durations as time.Duration, errors to match with errors.As and
// errors.Is, and control calls that a replaced http.DefaultTransport does not reach.
package svcstub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

// evaluateWith sends one evaluate to base through client; its status, Retry-After and error.
func evaluateWith(t *testing.T, client *http.Client, base string) (int, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	request, err := http.NewRequestWithContext(ctx, "POST", base+"/v1/flags/evaluate", strings.NewReader(`{"targetingKey": "user-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	request.Header.Set("Authorization", goServerKey)
	request.Header.Set("Content-Type", "application/json")
	answer, err := client.Do(request)
	if err != nil {
		return 0, "", err
	}
	defer answer.Body.Close()
	_, _ = io.Copy(io.Discard, answer.Body)
	if request.Header.Get(svcstub.HeaderFault) != "" {
		t.Errorf("the Transport changed the caller's request: %v", request.Header)
	}
	return answer.StatusCode, answer.Header.Get("Retry-After"), nil
}

// counting is a base RoundTripper that counts what it sends.
type counting struct{ sent atomic.Int32 }

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.sent.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func TestATransportFaultsOneClientAndNoOther(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)
	base := &counting{}
	faulty := &http.Client{Transport: &svcstub.Transport{
		Fault: svcstub.Fault{Mode: svcstub.ModeStatus, Status: 503, RetryAfter: 2 * time.Second},
		Base:  base,
	}}

	if status, retryAfter, err := evaluateWith(t, faulty, stub.URL); status != 503 || retryAfter != "2" || err != nil {
		t.Errorf("the faulted client got %d (Retry-After %q), %v; want a 503 with Retry-After 2", status, retryAfter, err)
	}
	if status, _, err := evaluateWith(t, http.DefaultClient, stub.URL); status != 200 || err != nil {
		t.Errorf("another client got %d, %v; want a 200", status, err)
	}
	if base.sent.Load() != 1 {
		t.Errorf("Base sent %d requests, want the faulted client's one", base.sent.Load())
	}
	requests := stub.Requests(svcstub.RouteEvaluate)
	if len(requests) != 2 || requests[0].Fault == nil || requests[0].Fault.Source != "header" || requests[1].Fault != nil {
		t.Errorf("the journal: %v; want a header fault, then none", requests)
	}
}

func TestATransportsModeNoneLetsItsClientThroughAnArmedFault(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)
	stub.Arm(svcstub.Fault{Mode: svcstub.Mode500, ApplyTo: []svcstub.Selector{svcstub.OnEvaluate}})
	through := &http.Client{Transport: &svcstub.Transport{Fault: svcstub.Fault{Mode: svcstub.ModeNone}}}
	unfaulted := &http.Client{Transport: &svcstub.Transport{}} // a zero Fault faults nothing

	if status, _, err := evaluateWith(t, through, stub.URL); status != 200 || err != nil {
		t.Errorf("ModeNone: %d, %v; want a 200 through the armed 500", status, err)
	}
	if status, _, err := evaluateWith(t, unfaulted, stub.URL); status != 500 || err != nil {
		t.Errorf("a zero Fault: %d, %v; want the armed 500", status, err)
	}
}

func TestATransportRefusesAFaultItCannotSend(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)
	for _, tc := range []struct {
		fault svcstub.Fault
		want  string
	}{
		{svcstub.Fault{Mode: svcstub.Mode500, ApplyTo: []svcstub.Selector{svcstub.OnEvaluate}}, "svcstub: a fault of one request has a Mode, Delay, Status and RetryAfter only;"},
		{svcstub.Fault{Mode: "500s"}, `svcstub: unknown fault mode "500s"`},
		{svcstub.Fault{Mode: svcstub.Mode429, RetryAfter: 3}, "svcstub: RetryAfter 3ns is not whole seconds, as Retry-After is (for 3 s: 3 * time.Second)"},
		{svcstub.Fault{Status: 503}, "svcstub: a fault of one request needs a Mode"},
	} {
		client := &http.Client{Transport: &svcstub.Transport{Fault: tc.fault}}
		if _, _, err := evaluateWith(t, client, stub.URL); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v\nwant %s", tc.fault, err, tc.want)
		}
		if _, err := svcstub.FaultHeaders(tc.fault); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("FaultHeaders(%+v): %v\nwant %s", tc.fault, err, tc.want)
		}
	}
	if sent := stub.Requests(svcstub.AnyRoute); len(sent) != 0 {
		t.Errorf("sent: %v", sent)
	}
}

func TestARequestPrintsAsOneLine(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)
	faulty := &http.Client{Transport: &svcstub.Transport{Fault: svcstub.Fault{Mode: svcstub.Mode500}}}
	if _, _, err := evaluateWith(t, faulty, stub.URL); err != nil {
		t.Fatal(err)
	}
	postEvaluate(t, stub.URL)
	requests := stub.Requests(svcstub.RouteEvaluate)
	want := regexp.MustCompile(`^\[#(\d+) POST /v1/flags/evaluate -> 500 \(fault 500, header\) #\d+ POST /v1/flags/evaluate -> 200\]$`)
	for _, format := range []string{"%v", "%+v"} {
		if got := fmt.Sprintf(format, requests); !want.MatchString(got) {
			t.Errorf("%s of the requests: %s\nwant a match of %s", format, got, want)
		}
	}
	if got := fmt.Sprintf("%+v", requests[0]); got != requests[0].String() || strings.Contains(got, "0xc") {
		t.Errorf("%%+v of a request: %s", got)
	}
}

func TestDurationsAreDurations(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)
	armed := stub.Arm(svcstub.Fault{
		Sequence: []svcstub.Step{{Mode: svcstub.Mode429, RetryAfter: 3 * time.Second}, {Mode: svcstub.ModeDelay, Delay: 50 * time.Millisecond}},
		ApplyTo:  []svcstub.Selector{svcstub.OnEvaluate},
	})
	if armed.Mode != "" {
		t.Errorf("a sequence armed as %+v", armed)
	}
	single := stub.Arm(svcstub.Fault{Mode: svcstub.ModeSlowBody, Delay: 1500 * time.Millisecond, ApplyTo: []svcstub.Selector{svcstub.OnCapture}})
	if single.Delay == nil || *single.Delay != 1500*time.Millisecond || single.RetryAfter != nil {
		t.Errorf("armed: Delay %v, RetryAfter %v; want 1.5s and none", single.Delay, single.RetryAfter)
	}
	retry := stub.Arm(svcstub.Fault{Mode: svcstub.Mode429, RetryAfter: 4 * time.Second, ApplyTo: []svcstub.Selector{svcstub.OnRegister}})
	if retry.RetryAfter == nil || *retry.RetryAfter != 4*time.Second || retry.Delay != nil {
		t.Errorf("armed: RetryAfter %v, Delay %v; want 4s and none", retry.RetryAfter, retry.Delay)
	}

	postEvaluate(t, stub.URL)
	postEvaluate(t, stub.URL)
	requests := stub.WaitForRequests(within(t, time.Minute), 2, svcstub.RouteEvaluate)
	if got := requests[0].RetryAfter; got == nil || *got != 3*time.Second || requests[1].RetryAfter != nil {
		t.Errorf("the journal's Retry-After: %v, then %v; want 3s, then none", got, requests[1].RetryAfter)
	}
	if requests[1].Duration < 50*time.Millisecond {
		t.Errorf("the delayed request took %s, less than its 50ms delay", requests[1].Duration)
	}
	gaps := stub.Gaps(svcstub.RouteEvaluate)
	if len(gaps) != 1 || gaps[0] != requests[1].Arrived-requests[0].Arrived || gaps[0] <= 0 {
		t.Errorf("Gaps = %v; arrivals %s and %s", gaps, requests[0].Arrived, requests[1].Arrived)
	}

	for _, request := range requests { // as JSON, as the stub wrote it: it reads back the same
		var again svcstub.Request
		if encoded, err := json.Marshal(request); err != nil || json.Unmarshal(encoded, &again) != nil || !reflect.DeepEqual(again, request) {
			t.Errorf("%v as JSON: %s (%v) reads back as %#v", request, encoded, err, again)
		}
	}
	for _, fault := range []svcstub.ArmedFault{armed, single, retry} {
		var again svcstub.ArmedFault
		if encoded, err := json.Marshal(fault); err != nil || json.Unmarshal(encoded, &again) != nil || !reflect.DeepEqual(again, fault) {
			t.Errorf("%+v as JSON: %s (%v) reads back as %+v", fault, encoded, err, again)
		}
	}

	_, err := stub.Client().Arm(context.Background(), svcstub.Fault{Mode: svcstub.Mode429, RetryAfter: 3})
	if want := "svcstub: RetryAfter 3ns is not whole seconds, as Retry-After is (for 3 s: 3 * time.Second)"; err == nil || err.Error() != want {
		t.Errorf("RetryAfter: 3: %v\nwant %s", err, want)
	}
}

func TestAWaitThatRunsOutCarriesWhatItWantedAndWhatCame(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)
	postCapture(t, stub.URL, exposure)
	postEvaluate(t, stub.URL)

	_, err := stub.Client().WaitForRecorded(within(t, 100*time.Millisecond), "svcEvents", 3)
	var timeout *svcstub.WaitTimeoutError
	if !errors.As(err, &timeout) || timeout.What != "svcEvents" || timeout.Want != 3 || timeout.Got != 1 ||
		len(timeout.Events) != 1 || timeout.Events[0]["flagKey"] != "checkout-v2" || timeout.Waited <= 0 || timeout.Waited > 100*time.Millisecond {
		t.Errorf("err = %#v", err)
	}
	_, err = stub.Client().WaitForRequests(within(t, 100*time.Millisecond), 2, svcstub.RouteEvaluate)
	if !errors.As(err, &timeout) || timeout.What != "requests" || timeout.Route != svcstub.RouteEvaluate || timeout.Want != 2 ||
		timeout.Got != 1 || len(timeout.Requests) != 1 || timeout.Requests[0].Route != svcstub.RouteEvaluate {
		t.Errorf("err = %#v", err)
	}
}

// TestChildControlCallsPassAReplacedDefaultTransport replaces http.DefaultTransport, as gock
// does, in a `go test` of its own (it changes the process's globals).
func TestChildControlCallsPassAReplacedDefaultTransport(t *testing.T) {
	if os.Getenv(childVariable) != "default-transport" {
		t.Skip("TestControlCallsAreTheHelpersOwn runs it")
	}
	replaced := http.DefaultTransport
	http.DefaultTransport = roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("intercepted by a replaced http.DefaultTransport")
	})
	t.Cleanup(func() { http.DefaultTransport = replaced })

	stub := svcstub.New(t)
	stub.Arm(svcstub.Fault{Mode: svcstub.Mode500})
	if requests := stub.Requests(svcstub.AnyRoute); len(requests) != 0 {
		t.Errorf("requests: %v", requests)
	}
	if _, err := http.Get(stub.URL + "/health"); err == nil || !strings.Contains(err.Error(), "intercepted") {
		t.Errorf("the replaced transport did not take http.Get: %v", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestControlCallsAreTheHelpersOwn(t *testing.T) {
	t.Parallel()
	client := svcstub.NewClient("http://127.0.0.1:1")
	if client.HTTP == nil || client.HTTP == http.DefaultClient || client.HTTP.Transport == nil || client.HTTP.Transport == http.DefaultTransport {
		t.Errorf("NewClient's HTTP is %+v", client.HTTP)
	}
	output, err := svcstub.GoTest(t, ".", map[string]string{childVariable: "default-transport"},
		"-run", "^TestChildControlCallsPassAReplacedDefaultTransport$", "-v", ".")
	if err != nil || !strings.Contains(output, "--- PASS: TestChildControlCallsPassAReplacedDefaultTransport") {
		t.Errorf("the child test (%v):\n%s", err, output)
	}
}
