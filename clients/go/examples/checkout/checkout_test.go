// checkout_test.go: run with `go test ./...`
package checkout_test

import (
	"testing"
	"time"

	"github.com/svc-stub/svc-stub/clients/go/examples/checkout"
	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

func TestCheckoutReadsTheServedVariant(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t) // this test's namespace: give the code under test stub.URL

	if got := checkout.Variant(stub.URL, "user-1"); got != "treatment-b" {
		t.Errorf("variant %q, want treatment-b (the default fixtures)", got)
	}
	var sent struct{ TargetingKey string } // what the code under test sent, as JSON
	if err := stub.Requests(svcstub.RouteEvaluate)[0].JSON(&sent); err != nil || sent.TargetingKey != "user-1" {
		t.Errorf("the evaluate sent %+v (%v), want user-1's", sent, err)
	}
}

func TestCheckoutFallsBackOffline(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)

	if got := checkout.Variant(stub.OfflineURL(), "user-1"); got != "control" { // nothing listens there
		t.Errorf("variant %q offline, want control", got)
	}
}

func TestCheckoutFallsBackWhileEvaluateFails(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)
	failing := svcstub.Fault{Mode: svcstub.Mode500, ApplyTo: []svcstub.Selector{svcstub.OnEvaluate}}

	stub.WithFault(failing, func() { // armed for this func only
		if got := checkout.Variant(stub.URL, "user-1"); got != "control" {
			t.Errorf("variant %q while evaluate fails, want control", got)
		}
	})
	if got := checkout.Variant(stub.URL, "user-1"); got != "treatment-b" {
		t.Errorf("variant %q once it serves again, want treatment-b", got)
	}
	stub.AssertNoRequest(svcstub.RouteCapture)
}

func TestCheckoutGivesUpOnASlowService(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t, svcstub.WithFixtures(map[string]any{
		"flags": map[string]any{"checkout-v2": map[string]any{"type": "string", "value": "one-page"}},
	}))
	stub.Arm(svcstub.Fault{Mode: svcstub.ModeDelay, Delay: 5 * time.Second, TTLRequests: 1})

	if got := checkout.Variant(stub.URL, "user-1"); got != "control" {
		t.Errorf("variant %q after its 2 s timeout, want control", got)
	}
	if got := checkout.Variant(stub.URL, "user-1"); got != "one-page" {
		t.Errorf("variant %q, want this test's one-page", got)
	}
}
