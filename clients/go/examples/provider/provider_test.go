// provider_test.go: run with `go test ./...`
package provider_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/svc-stub/svc-stub/clients/go/examples/provider"
	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

// acme is the organisation the tests work in: its key, and the project it already has.
var acme = map[string]any{"orgs": map[string]any{"org_acme": map[string]any{
	"keys":     []any{map[string]any{"key": "svc_org_acme_tf"}},
	"projects": []any{map[string]any{"name": "Shop", "slug": "shop"}},
}}}

func TestTheProviderCreatesAProject(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)
	stub.SeedManagement(acme)

	id, err := provider.CreateProject(http.DefaultClient, stub.URL, "svc_org_acme_tf", "Checkout", "checkout")
	if err != nil || !strings.HasPrefix(id, "proj_") {
		t.Fatalf("CreateProject: %q, %v", id, err)
	}
	if created := stub.Requests(svcstub.RouteProjectsCreate); len(created) != 1 || created[0].StatusOr() != 201 {
		t.Errorf("the stub saw %d creates", len(created))
	}
}

func TestTheProviderReportsASlugTaken(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)
	stub.SeedManagement(acme)

	_, err := provider.CreateProject(http.DefaultClient, stub.URL, "svc_org_acme_tf", "Shop again", "shop")
	if err == nil || !strings.HasPrefix(err.Error(), "409 ") {
		t.Errorf("CreateProject with a slug taken: %v, want a 409", err)
	}
}

func TestTheProviderSurfacesAnOutage(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)
	stub.SeedManagement(acme)
	stub.Arm(svcstub.Fault{Mode: svcstub.ModeStatus, Status: 503, ApplyTo: []svcstub.Selector{svcstub.OnProjects}, TTLRequests: 1})

	if _, err := provider.CreateProject(http.DefaultClient, stub.URL, "svc_org_acme_tf", "Checkout", "checkout"); err == nil {
		t.Error("CreateProject succeeded during an outage")
	}
}

func TestTheProviderSurfacesAConnectionReset(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)
	stub.SeedManagement(acme)
	// this client's every request is reset, whatever is armed; no other client's is
	resetting := &http.Client{Transport: &svcstub.Transport{Fault: svcstub.Fault{Mode: svcstub.ModeReset}}}

	if _, err := provider.CreateProject(resetting, stub.URL, "svc_org_acme_tf", "Checkout", "checkout"); err == nil {
		t.Error("CreateProject succeeded through a reset connection")
	}
	if _, err := provider.CreateProject(http.DefaultClient, stub.URL, "svc_org_acme_tf", "Checkout", "checkout"); err != nil {
		t.Errorf("another client: %v", err)
	}
}
