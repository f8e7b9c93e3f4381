package svcstub

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// The errors of this package are types to match with errors.As:
//
//	var refused *svcstub.StubError
//	if errors.As(err, &refused) && refused.Status == 404 { ... }
//
// A control call that gets no answer is an *UnreachableError (errors.Is(err,
// syscall.ECONNREFUSED) holds when the connection was refused), one whose answer is not the
// stub's JSON a *DecodeError, one the stub refused a *StubError; a wait that runs out is a
// *WaitTimeoutError carrying what it wanted and what came.

// StubError is a control call the stub refused: its status, error code and message.
type StubError struct {
	Status  int
	Code    string
	Message string
}

func (e *StubError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// UnreachableError says nothing answers at a URL: Err is why (the *net.OpError of a refused
// connection, context.DeadlineExceeded...), and errors.Is and errors.As see through to it.
type UnreachableError struct {
	URL    string
	Reason string // Err in a few words: "connection refused", "no answer in time"
	Err    error
}

func (e *UnreachableError) Error() string {
	port := "PORT"
	if parsed, err := url.Parse(e.URL); err == nil && parsed.Port() != "" {
		port = parsed.Port()
	}
	return fmt.Sprintf("svc-stub at %s does not answer (%s); start one there (svc-stub --port %s) or correct the URL", e.URL, e.Reason, port)
}

// Unwrap is why nothing answered.
func (e *UnreachableError) Unwrap() error { return e.Err }

// DecodeError says something answered at a URL, but not with svc-stub's JSON: another server
// there, or a stub of another version. Err is the decoding's error.
type DecodeError struct {
	URL  string
	Path string // the control path that answered
	Err  error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("svc-stub at %s: %s answers something other than svc-stub's JSON (%v)", e.URL, e.Path, e.Err)
}

// Unwrap is the decoding's error.
func (e *DecodeError) Unwrap() error { return e.Err }

// StartError says the run's stub could not be had: no svc-stub command, or `svc-stub shared`
// refused or did not start it (in the stub's own words).
type StartError struct{ Message string }

func (e *StartError) Error() string { return e.Message }

// WaitTimeoutError says a wait on the journal ran out: what it waited for (Want of What, for
// Waited) and what came (Got; Requests or Events hold them).
type WaitTimeoutError struct {
	// What is what was counted: "events", "svcEvents", "targets" or "requests".
	What string
	// Route is the route the requests were counted on (AnyRoute: every one but preflights).
	Route  Route
	Want   int
	Got    int
	Waited time.Duration
	// Requests: what the journal listed when the wait ran out (a wait for requests).
	Requests []Request
	// Events: what was recorded when the wait ran out (a wait for events, svcEvents or targets).
	Events []Event
}

func (e *WaitTimeoutError) Error() string {
	if e.What != "requests" {
		return fmt.Sprintf("waited %s for %d %s, got %d:\n%s", e.Waited, e.Want, e.What, e.Got, shown(e.Events))
	}
	to := string(e.Route)
	if e.Route == AnyRoute {
		to = "any route"
	}
	return fmt.Sprintf("waited %s for %d requests to %s, got %d:\n%s", e.Waited, e.Want, to, e.Got, listed(e.Requests))
}

// listed is requests as lines, each as Request.String says it.
func listed(requests []Request) string {
	if len(requests) == 0 {
		return "  (none)"
	}
	lines := make([]string, len(requests))
	for i, r := range requests {
		lines[i] = "  " + r.String()
	}
	return strings.Join(lines, "\n")
}
