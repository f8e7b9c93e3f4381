package svcstub

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"
)

// Fault is a fault to arm: one Mode with its parameters, or a Sequence of steps. Armed (Arm,
// WithFault), it fires on the requests its ApplyTo selects; as a Transport (or FaultHeaders),
// on every request of one client, whatever is armed.
type Fault struct {
	Mode Mode
	// Sequence: one step per matching request, then disarmed (not with Mode or TTLRequests).
	Sequence []Step
	// ApplyTo: routes, resources or groups (default OnAll).
	ApplyTo []Selector
	// TTLRequests: fault only the next N matching requests, then disarm (0: until cleared).
	TTLRequests int
	// Delay for ModeDelay and ModeSlowBody (0: the stub's 10 s); sent in whole milliseconds.
	Delay time.Duration
	// Status: the answer's status; required for ModeStatus.
	Status int
	// Body: the answer's body instead of the mode's; a string as it is, anything else as JSON.
	Body any
	// RetryAfter: Retry-After for Mode429, and ModeStatus 429 or 503, in whole seconds
	// (3 * time.Second; 0: the stub's 1 s).
	RetryAfter time.Duration
	// Probability: fire on this share (0, 1] of matching requests (0: every one), with Seed.
	Probability float64
	Seed        int
}

// Step is one step of a Fault's Sequence: the answer to one matching request, in turn. Its Mode
// is any fault mode, or ModeNone to let that request through; its parameters are a Fault's,
// for this step alone. Once every step has answered, the fault is disarmed:
//
//	stub.Arm(svcstub.Fault{
//		Sequence: []svcstub.Step{{Mode: svcstub.Mode500}, {Mode: svcstub.ModeNone}, {Mode: svcstub.Mode429, RetryAfter: 2 * time.Second}},
//		ApplyTo:  []svcstub.Selector{svcstub.OnEvaluate},
//	}) // the next evaluate gets a 500, the one after it is served, the third gets a 429
type Step struct {
	Mode Mode
	// Delay for ModeDelay and ModeSlowBody (0: the stub's 10 s).
	Delay time.Duration
	// Status: the answer's status; required for ModeStatus.
	Status int
	// Body: the answer's body instead of the mode's; a string as it is, anything else as JSON.
	Body any
	// RetryAfter: Retry-After for Mode429, and ModeStatus 429 or 503, in whole seconds.
	RetryAfter time.Duration
}

// ArmedFault is a fault as the stub armed it. Of Delay, Status, Body and RetryAfter the stub
// lists only those its Mode uses: one it leaves out is nil (all four are for a sequence).
type ArmedFault struct {
	ID          int        `json:"id"`
	ApplyTo     []Selector `json:"applyTo"`
	Mode        Mode       `json:"mode,omitempty"`
	TTLRequests *int       `json:"ttlRequests"`
	Probability *float64   `json:"probability"`
	Seed        *int       `json:"seed"`
	Fired       int        `json:"fired"`
	// Delay: for ModeDelay and ModeSlowBody (the stub's delayMs).
	Delay *time.Duration `json:"-"`
	// Status: for the modes that make their own answer; nil too where it is the mode's own.
	Status *int `json:"status,omitempty"`
	// Body: likewise, decoded as encoding/json decodes into any; nil where it is the mode's own.
	Body any `json:"body,omitempty"`
	// RetryAfter: for Mode429, and ModeStatus with 429 or 503 (the stub's retryAfter, in seconds).
	RetryAfter *time.Duration `json:"-"`
}

// UnmarshalJSON reads a fault as the stub lists it (delayMs in ms, retryAfter in seconds).
func (a *ArmedFault) UnmarshalJSON(data []byte) error {
	type plain ArmedFault
	wire := struct {
		*plain
		DelayMs    *float64 `json:"delayMs"`
		RetryAfter *float64 `json:"retryAfter"`
	}{plain: (*plain)(a)}
	if err := json.Unmarshal(data, &wire); err != nil {
		return err
	}
	a.Delay, a.RetryAfter = inUnits(wire.DelayMs, time.Millisecond), inUnits(wire.RetryAfter, time.Second)
	return nil
}

// MarshalJSON writes a fault as the stub lists it, so that it reads back the same.
func (a ArmedFault) MarshalJSON() ([]byte, error) {
	type plain ArmedFault
	return json.Marshal(struct {
		plain
		DelayMs    *float64 `json:"delayMs,omitempty"`
		RetryAfter *float64 `json:"retryAfter,omitempty"`
	}{plain(a), count(a.Delay, time.Millisecond), count(a.RetryAfter, time.Second)})
}

func inUnits(n *float64, unit time.Duration) *time.Duration {
	if n == nil {
		return nil
	}
	d := time.Duration(*n * float64(unit))
	return &d
}

// arming is the POST /_test/fault document; a mistake is an error naming it, before anything is sent.
func (f Fault) arming() (map[string]any, error) {
	document := map[string]any{}
	if f.Mode == "" && f.Sequence == nil {
		return nil, fmt.Errorf("svcstub: a Fault needs a Mode or a Sequence")
	}
	if f.Mode != "" {
		if err := checkMode(f.Mode, false); err != nil {
			return nil, err
		}
		document["mode"] = f.Mode
	}
	if f.Sequence != nil {
		steps := make([]map[string]any, 0, len(f.Sequence))
		for _, step := range f.Sequence {
			if err := checkMode(step.Mode, true); err != nil {
				return nil, err
			}
			wire := map[string]any{"mode": step.Mode}
			if err := parameters(wire, step.Delay, step.Status, step.Body, step.RetryAfter); err != nil {
				return nil, err
			}
			steps = append(steps, wire)
		}
		document["sequence"] = steps
	}
	for _, selector := range f.ApplyTo {
		if !contains(Selectors, selector) {
			return nil, fmt.Errorf("svcstub: ApplyTo: unknown selector %q; the selectors are %v", selector, Selectors)
		}
	}
	if len(f.ApplyTo) > 0 {
		document["applyTo"] = f.ApplyTo
	}
	if f.TTLRequests > 0 {
		document["ttlRequests"] = f.TTLRequests
	}
	if f.Probability > 0 {
		document["probability"] = f.Probability
		document["seed"] = f.Seed
	}
	if err := parameters(document, f.Delay, f.Status, f.Body, f.RetryAfter); err != nil {
		return nil, err
	}
	return document, nil
}

func parameters(into map[string]any, delay time.Duration, status int, body any, retryAfter time.Duration) error {
	if delay > 0 {
		into["delayMs"] = delay.Milliseconds()
	}
	if status != 0 {
		into["status"] = status
	}
	if body != nil {
		into["body"] = body
	}
	if retryAfter != 0 {
		seconds, err := wholeSeconds(retryAfter)
		if err != nil {
			return err
		}
		into["retryAfter"] = seconds
	}
	return nil
}

// wholeSeconds is a Retry-After in seconds, or an error if it is not a whole number of them (as
// an int from before RetryAfter was a time.Duration would be: 3 is 3ns).
func wholeSeconds(retryAfter time.Duration) (int64, error) {
	if retryAfter < 0 || retryAfter%time.Second != 0 {
		return 0, fmt.Errorf("svcstub: RetryAfter %s is not whole seconds, as Retry-After is (for 3 s: 3 * time.Second)", retryAfter)
	}
	return int64(retryAfter / time.Second), nil
}

// statusCode matches a status a fault can answer with (200 to 599, as Status takes).
var statusCode = regexp.MustCompile(`^[2-5][0-9]{2}$`)

func checkMode(mode Mode, inSequence bool) error {
	if contains(Modes, mode) || (inSequence && mode == ModeNone) {
		return nil
	}
	message := fmt.Sprintf("svcstub: unknown fault mode %q; the modes are %v", mode, Modes)
	if statusCode.MatchString(string(mode)) {
		// a status guessed as a mode (Mode: "503") is told where a status goes
		message += fmt.Sprintf("; for a %s, use Mode: ModeStatus with Status: %s", mode, mode)
	}
	return errors.New(message)
}

// FaultHeaders are the headers that fault one request, whatever is armed: f's Mode (ModeNone
// lets the request through an armed fault) with its Delay, Status and RetryAfter. What only an
// armed fault can have (Sequence, ApplyTo, TTLRequests, Body, Probability) is an error. A
// Transport adds them to every request of a client.
func FaultHeaders(f Fault) (http.Header, error) {
	if f.Mode == "" {
		return nil, errors.New("svcstub: a fault of one request needs a Mode")
	}
	if err := checkMode(f.Mode, true); err != nil {
		return nil, err
	}
	if f.Sequence != nil || f.ApplyTo != nil || f.TTLRequests != 0 || f.Body != nil || f.Probability != 0 || f.Seed != 0 {
		return nil, fmt.Errorf("svcstub: a fault of one request has a Mode, Delay, Status and RetryAfter only; Sequence, ApplyTo, TTLRequests, Body, Probability and Seed are for Arm")
	}
	headers := http.Header{}
	headers.Set(HeaderFault, string(f.Mode))
	if f.Delay > 0 {
		headers.Set(HeaderDelayMs, strconv.FormatInt(f.Delay.Milliseconds(), 10))
	}
	if f.Status != 0 {
		headers.Set(HeaderStatus, strconv.Itoa(f.Status))
	}
	if f.RetryAfter != 0 {
		seconds, err := wholeSeconds(f.RetryAfter)
		if err != nil {
			return nil, err
		}
		headers.Set(HeaderRetryAfter, strconv.FormatInt(seconds, 10))
	}
	return headers, nil
}

// Transport is an http.RoundTripper that faults every request of one client with Fault (its
// Mode, Delay, Status and RetryAfter), whatever is armed, and leaves every other client of the
// test alone: give the client under test
//
//	&http.Client{Transport: &svcstub.Transport{Fault: svcstub.Fault{Mode: svcstub.ModeReset}}}
//
// A zero Fault faults nothing; a Fault that cannot fault one request (see FaultHeaders) is the
// error of each request. Each request is sent by Base (nil: http.DefaultTransport) as a copy
// with the fault's headers added; the caller's request is not changed. The journal records
// each such fault with Source "header".
type Transport struct {
	Fault Fault
	Base  http.RoundTripper
}

// RoundTrip sends a copy of request with the fault's headers through Base.
func (t *Transport) RoundTrip(request *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if t.Fault.isZero() {
		return base.RoundTrip(request)
	}
	headers, err := FaultHeaders(t.Fault)
	if err != nil {
		if request.Body != nil {
			request.Body.Close() // as a RoundTripper must, even on an error
		}
		return nil, err
	}
	faulted := request.Clone(request.Context())
	for name, values := range headers {
		faulted.Header[name] = values
	}
	return base.RoundTrip(faulted)
}

func (f Fault) isZero() bool {
	return f.Mode == "" && f.Sequence == nil && f.ApplyTo == nil && f.TTLRequests == 0 && f.Delay == 0 &&
		f.Status == 0 && f.Body == nil && f.RetryAfter == 0 && f.Probability == 0 && f.Seed == 0
}

func contains[T comparable](list []T, value T) bool {
	for _, item := range list {
		if item == value {
			return true
		}
	}
	return false
}
