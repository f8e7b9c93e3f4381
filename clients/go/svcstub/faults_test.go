package svcstub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

// seen is what a client sees of one evaluate: an answer, or the error that took its place.
type seen struct {
	status  int
	header  http.Header
	decoded map[string]any
	err     error
	took    time.Duration
}

const (
	// hangTimeout is how long a client waits for a hung answer before it gives up: what
	// ModeHang is tested by.
	hangTimeout = time.Second
	// answerTimeout guards against a hang; it is no speed budget (a delayed answer on a busy
	// 2-core machine can take well over a second).
	answerTimeout = time.Minute
)

// timeoutFor is how long a client waits for an answer faulted by mode.
func timeoutFor(mode svcstub.Mode) time.Duration {
	if mode == svcstub.ModeHang {
		return hangTimeout
	}
	return answerTimeout
}

// evaluate sends one evaluate to base, as a client library does, waiting at most wait.
func evaluate(t *testing.T, base string, header http.Header, wait time.Duration) seen {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	body := `{"targetingKey": "user-1", "flagKeys": ["checkout-v2"]}`
	request, err := http.NewRequestWithContext(ctx, "POST", base+"/v1/flags/evaluate", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	request.Header.Set("Authorization", "Bearer project-api-key_go")
	request.Header.Set("Content-Type", "application/json")
	for name, values := range header {
		request.Header[name] = values
	}
	started := time.Now()
	answer, err := http.DefaultClient.Do(request)
	if err != nil {
		return seen{err: err, took: time.Since(started)}
	}
	defer answer.Body.Close()
	raw, err := io.ReadAll(answer.Body)
	got := seen{status: answer.StatusCode, header: answer.Header, err: err, took: time.Since(started)}
	if json.NewDecoder(bytes.NewReader(raw)).Decode(&got.decoded) != nil {
		got.decoded = nil
	}
	return got
}

// faultCases: each mode, what it is armed with, and what a client sees of it.
var faultCases = map[svcstub.Mode]struct {
	fault svcstub.Fault
	seen  func(seen) bool
}{
	svcstub.ModeDelay: {svcstub.Fault{Delay: 300 * time.Millisecond}, func(s seen) bool { return s.status == 200 && s.took >= 280*time.Millisecond }},
	svcstub.Mode401:   {svcstub.Fault{}, func(s seen) bool { return s.status == 401 }},
	svcstub.Mode429:   {svcstub.Fault{RetryAfter: 3 * time.Second}, func(s seen) bool { return s.status == 429 && s.header.Get("Retry-After") == "3" }},
	svcstub.Mode500:   {svcstub.Fault{}, func(s seen) bool { return s.status == 500 }},
	svcstub.ModeInvalidJSON: {svcstub.Fault{}, func(s seen) bool {
		return s.status == 200 && s.decoded == nil
	}},
	svcstub.ModeTruncated: {svcstub.Fault{}, func(s seen) bool { return s.err != nil || s.decoded == nil }},
	svcstub.ModeQuotaLimited: {svcstub.Fault{}, func(s seen) bool {
		return s.status == 200 && s.decoded["quotaLimited"] == true
	}},
	svcstub.ModeStatus: {svcstub.Fault{Status: 503, RetryAfter: 2 * time.Second}, func(s seen) bool {
		return s.status == 503 && s.header.Get("Retry-After") == "2"
	}},
	svcstub.ModeReset:         {svcstub.Fault{}, func(s seen) bool { return s.err != nil }},
	svcstub.ModeEmptyResponse: {svcstub.Fault{}, func(s seen) bool { return s.err != nil }},
	svcstub.ModeSlowBody: {svcstub.Fault{Delay: 300 * time.Millisecond}, func(s seen) bool {
		return s.status == 200 && s.decoded != nil && s.took >= 280*time.Millisecond
	}},
	svcstub.ModeHang: {svcstub.Fault{}, func(s seen) bool { return errors.Is(s.err, context.DeadlineExceeded) }},
}

func TestEveryModeIsCovered(t *testing.T) {
	for _, mode := range svcstub.Modes {
		if _, ok := faultCases[mode]; !ok {
			t.Errorf("no case for mode %s", mode)
		}
	}
	if len(faultCases) != len(svcstub.Modes) {
		t.Errorf("%d cases for %d modes", len(faultCases), len(svcstub.Modes))
	}
}

func TestArmedFaultsReachTheClientOnceAndTheJournalNamesThem(t *testing.T) {
	for _, mode := range svcstub.Modes {
		mode, c := mode, faultCases[mode]
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			stub := svcstub.New(t)
			fault := c.fault
			fault.Mode, fault.ApplyTo, fault.TTLRequests = mode, []svcstub.Selector{svcstub.OnEvaluate}, 1
			if armed := stub.Arm(fault); armed.Mode != mode {
				t.Fatalf("armed %q, not %q", armed.Mode, mode)
			}
			if got := evaluate(t, stub.URL, nil, timeoutFor(mode)); !c.seen(got) {
				t.Fatalf("the client saw status %d, error %v, after %s", got.status, got.err, got.took)
			}
			if after := evaluate(t, stub.URL, nil, answerTimeout); after.status != 200 {
				t.Fatalf("TTLRequests 1 faults one request only; the next was answered %d", after.status)
			}
			// listed as each ends: a hung request only once its client has given up on it
			var faulted []svcstub.FaultRecord
			for _, r := range stub.WaitForRequests(context.Background(), 2, svcstub.RouteEvaluate) {
				if r.Fault != nil {
					faulted = append(faulted, *r.Fault)
				}
			}
			if len(faulted) != 1 || faulted[0].Mode != mode || faulted[0].Source != "armed" {
				t.Fatalf("the journal's faults: %+v", faulted)
			}
		})
	}
}

func TestFaultHeadersFaultOneRequest(t *testing.T) {
	for _, mode := range svcstub.Modes {
		mode, c := mode, faultCases[mode]
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			stub := svcstub.New(t)
			fault := c.fault
			fault.Mode = mode
			headers, err := svcstub.FaultHeaders(fault)
			if err != nil {
				t.Fatal(err)
			}
			if got := evaluate(t, stub.URL, headers, timeoutFor(mode)); !c.seen(got) {
				t.Fatalf("the client saw status %d, error %v, after %s", got.status, got.err, got.took)
			}
			request := stub.WaitForRequests(context.Background(), 1, svcstub.RouteEvaluate)[0]
			if request.Fault == nil || request.Fault.Source != "header" {
				t.Fatalf("the journal's fault: %+v", request.Fault)
			}
		})
	}
}

func TestWithFaultDisarmsItsFaultAloneWhenTheFuncReturns(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)
	kept := stub.Arm(svcstub.Fault{Mode: svcstub.Mode429, ApplyTo: []svcstub.Selector{svcstub.OnCapture}})
	stub.WithFault(svcstub.Fault{Mode: svcstub.Mode500, ApplyTo: []svcstub.Selector{svcstub.OnEvaluate}}, func() {
		if got := evaluate(t, stub.URL, nil, answerTimeout); got.status != 500 {
			t.Errorf("inside: %d", got.status)
		}
	})
	if got := evaluate(t, stub.URL, nil, answerTimeout); got.status != 200 {
		t.Errorf("after: %d", got.status)
	}
	if armed := stub.Armed(); len(armed) != 1 || armed[0].ID != kept.ID {
		t.Errorf("still armed: %+v", armed)
	}
}

func TestASequenceIsConsumedOneRequestAtATime(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)
	stub.Arm(svcstub.Fault{
		Sequence: []svcstub.Step{{Mode: svcstub.Mode500}, {Mode: svcstub.ModeStatus, Status: 503}, {Mode: svcstub.ModeNone}, {Mode: svcstub.Mode429}},
		ApplyTo:  []svcstub.Selector{svcstub.OnEvaluate},
	})
	var statuses []int
	for i := 0; i < 5; i++ {
		statuses = append(statuses, evaluate(t, stub.URL, nil, answerTimeout).status)
	}
	if want := []int{500, 503, 200, 429, 200}; !equal(statuses, want) {
		t.Errorf("statuses %v, want %v", statuses, want)
	}
}

func TestAMistakeIsOneLineBeforeAnythingIsSent(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)
	ctx := context.Background()
	_, err := stub.Client().Arm(ctx, svcstub.Fault{Mode: "500s"})
	if want := `svcstub: unknown fault mode "500s"; the modes are [delay 401 429 500 invalid_json truncated quota_limited status reset empty_response slow_body hang]`; err == nil || err.Error() != want {
		t.Errorf("got %v", err)
	}
	_, err = stub.Client().Arm(ctx, svcstub.Fault{Mode: "503"})
	if want := `; for a 503, use Mode: ModeStatus with Status: 503`; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got %v", err)
	}
	for _, notAStatus := range []svcstub.Mode{"150", "600", "0503", "+503"} {
		_, err = stub.Client().Arm(ctx, svcstub.Fault{Mode: notAStatus})
		if err == nil || strings.Contains(err.Error(), "for a") {
			t.Errorf("%s: got %v, want no hint", notAStatus, err)
		}
	}
	_, err = stub.Client().Arm(ctx, svcstub.Fault{Mode: svcstub.Mode500, ApplyTo: []svcstub.Selector{"evaluation"}})
	if err == nil || !strings.HasPrefix(err.Error(), `svcstub: ApplyTo: unknown selector "evaluation"; the selectors are [all runtime`) {
		t.Errorf("got %v", err)
	}
	_, err = stub.Client().Arm(ctx, svcstub.Fault{Mode: svcstub.ModeStatus})
	var refused *svcstub.StubError
	if !errors.As(err, &refused) || refused.Status != 400 || refused.Code != "INVALID_BODY" {
		t.Errorf("got %v", err)
	}
	if requests := stub.Requests(svcstub.AnyRoute); len(requests) != 0 {
		t.Errorf("sent: %v", requests)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
