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
// The stub is started on first use (svc-stub --port 0, from SVC_STUB_BIN or PATH) and shared
// by every test of the run, every package of one `go test` included; it stops when the run
// ends, however it ends. SVC_STUB_URL uses a stub that is already running instead.
package svcstub
