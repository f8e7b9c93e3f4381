// A brand-new project's one test: svcstub installed from the module proxy by `go get`, a
// fault armed on evaluate, and what a plain HTTP call then sees.
package shop

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

func TestMain(m *testing.M) { os.Exit(svcstub.Main(m)) }

func TestAnArmed500IsWhatEvaluateAnswers(t *testing.T) {
	stub := svcstub.New(t)
	stub.Arm(svcstub.Fault{Mode: svcstub.Mode500, ApplyTo: []svcstub.Selector{svcstub.OnEvaluate}})

	request, _ := http.NewRequest("POST", stub.URL+"/v1/flags/evaluate", strings.NewReader(`{"targetingKey": "user-1"}`))
	request.Header.Set("Authorization", "Bearer project-api-key_shop")
	request.Header.Set("Content-Type", "application/json")
	answer, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	defer answer.Body.Close()
	if answer.StatusCode != http.StatusInternalServerError {
		t.Fatalf("evaluate answered %d, want the armed 500", answer.StatusCode)
	}
	if got := len(stub.Requests(svcstub.RouteEvaluate)); got != 1 {
		t.Fatalf("the stub recorded %d evaluate requests, want 1", got)
	}
}
