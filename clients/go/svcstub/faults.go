package svcstub

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"
)

// Fault is a fault to arm: one Mode with its parameters, or a Sequence of steps.
type Fault struct {
	Mode Mode
	// Sequence: one step per matching request, then disarmed (not with Mode or TTLRequests).
	Sequence []Step
	// ApplyTo: routes, resources or groups (default OnAll).
	ApplyTo []Selector
	// TTLRequests: fault only the next N matching requests, then disarm (0: until cleared).
	TTLRequests int
	// Delay for ModeDelay and ModeSlowBody (0: the stub's 10 s).
	Delay time.Duration
	// Status: the answer's status; required for ModeStatus.
	Status int
	// Body: the answer's body instead of the mode's; a string as it is, anything else as JSON.
	Body any
	// RetryAfter: seconds in Retry-After for Mode429, and ModeStatus 429 or 503 (0: the stub's 1).
	RetryAfter int
	// Probability: fire on this share (0, 1] of matching requests (0: every one), with Seed.
	Probability float64
	Seed        int
}

// Step is one step of a sequence: a mode (ModeNone lets one request through) and its parameters.
type Step struct {
	Mode       Mode
	Delay      time.Duration
	Status     int
	Body       any
	RetryAfter int
}

// ArmedFault is a fault as the stub armed it. Of DelayMs, Status, Body and RetryAfter the stub
// lists only those its Mode uses: one it leaves out is nil (all four are for a sequence).
type ArmedFault struct {
	ID          int        `json:"id"`
	ApplyTo     []Selector `json:"applyTo"`
	Mode        Mode       `json:"mode,omitempty"`
	TTLRequests *int       `json:"ttlRequests"`
	Probability *float64   `json:"probability"`
	Seed        *int       `json:"seed"`
	Fired       int        `json:"fired"`
	// DelayMs: for ModeDelay and ModeSlowBody.
	DelayMs *int `json:"delayMs,omitempty"`
	// Status: for the modes that make their own answer; nil too where it is the mode's own.
	Status *int `json:"status,omitempty"`
	// Body: likewise, decoded as encoding/json decodes into any; nil where it is the mode's own.
	Body any `json:"body,omitempty"`
	// RetryAfter: for Mode429, and ModeStatus with 429 or 503.
	RetryAfter *int `json:"retryAfter,omitempty"`
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
			parameters(wire, step.Delay, step.Status, step.Body, step.RetryAfter)
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
	parameters(document, f.Delay, f.Status, f.Body, f.RetryAfter)
	return document, nil
}

func parameters(into map[string]any, delay time.Duration, status int, body any, retryAfter int) {
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
		into["retryAfter"] = retryAfter
	}
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

// FaultHeaders are the headers that fault one request, whatever is armed: add them to the
// client's request. Delay, Status and RetryAfter are used; the rest of f is ignored.
func FaultHeaders(f Fault) http.Header {
	headers := http.Header{}
	headers.Set(HeaderFault, string(f.Mode))
	if f.Delay > 0 {
		headers.Set(HeaderDelayMs, strconv.FormatInt(f.Delay.Milliseconds(), 10))
	}
	if f.Status != 0 {
		headers.Set(HeaderStatus, strconv.Itoa(f.Status))
	}
	if f.RetryAfter != 0 {
		headers.Set(HeaderRetryAfter, strconv.Itoa(f.RetryAfter))
	}
	return headers
}

func contains[T comparable](list []T, value T) bool {
	for _, item := range list {
		if item == value {
			return true
		}
	}
	return false
}
