package svcstub

import (
	"fmt"
	"net/url"
)

// StubError is a control call the stub refused: its status, error code and message.
type StubError struct {
	Status  int
	Code    string
	Message string
}

func (e *StubError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// UnreachableError says nothing (or something other than svc-stub) answers at a URL.
type UnreachableError struct {
	URL    string
	Reason string
}

func (e *UnreachableError) Error() string {
	port := "PORT"
	if parsed, err := url.Parse(e.URL); err == nil && parsed.Port() != "" {
		port = parsed.Port()
	}
	return fmt.Sprintf("svc-stub at %s does not answer (%s); start one there (svc-stub --port %s) or correct the URL", e.URL, e.Reason, port)
}

// StartError says the run's stub could not be had: no svc-stub command, or `svc-stub shared`
// refused or did not start it (in the stub's own words).
type StartError struct{ Message string }

func (e *StartError) Error() string { return e.Message }

// WaitTimeoutError says a wait on the journal ran out; it shows what did arrive.
type WaitTimeoutError struct{ Message string }

func (e *WaitTimeoutError) Error() string { return e.Message }
