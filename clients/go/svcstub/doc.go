// Package svcstub gives each Go test a namespace of its own on svc-stub, the control-point
// service's test stub: faults in one line, fixtures from a map or a file, the management plane
// seeded, and what the client sent waited for and asserted.
//
//	func TestCheckoutFallsBack(t *testing.T) {
//		t.Parallel()
//		stub := svcstub.New(t) // the client under test gets stub.URL
//		stub.Arm(svcstub.Fault{Mode: svcstub.Mode500, ApplyTo: []svcstub.Selector{svcstub.OnEvaluate}})
//		...
//		stub.AssertNoRequest(svcstub.RouteCapture)
//	}
//
// The package is a typed client of what the stub decides, and decides none of it itself: one
// stub for a `go test` run, shared by all its packages and stopped when the run ends however it
// ends, is `svc-stub shared --owner-named go`; a test's namespace is named by the stub from
// t.Name() (POST /_test/namespaces {"test": ...}); an assertion's verdict and words are the
// stub's (GET /_test/checks/{check}). A change to one of those rules is one change, in the
// stub. SVC_STUB_URL uses a stub that is already running instead.
//
// To fault every request of one client rather than the routes of the namespace, give that
// client a Transport (an http.RoundTripper). Durations are time.Duration throughout; a Request
// prints as one line. Errors are types to match with errors.As (StubError, UnreachableError,
// DecodeError, WaitTimeoutError, StartError), and control calls go through an http.Client of
// the package's own, never http.DefaultClient or http.DefaultTransport.
//
// A failed test's journal goes to svc-stub-journal/<package path> in os.TempDir() (or in
// SVC_STUB_JOURNAL_DIR), emptied of earlier runs' journals when a run writes its first.
package svcstub
