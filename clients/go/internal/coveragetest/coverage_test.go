// Package coveragetest is a suite that arms only a 500 on evaluate: svcstub's
// TestMainPrintsTheRunsCoverage runs it with `go test -v` and reads what svcstub.Main printed
// and wrote. SVCSTUB_COVERAGE_GATE is the runtime profile's gate, in percent ("": none).
package coveragetest

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

func TestMain(m *testing.M) {
	var gates []svcstub.Gate
	if percent, err := strconv.ParseFloat(os.Getenv("SVCSTUB_COVERAGE_GATE"), 64); err == nil {
		gates = append(gates, svcstub.Gate{Profile: "runtime", Percent: percent})
	}
	os.Exit(svcstub.Main(m, gates...))
}

func TestEvaluateFallsBackOnA500(t *testing.T) {
	if os.Getenv("SVCSTUB_COVERAGE_CHILD") == "" {
		t.Skip("run by svcstub's TestMainPrintsTheRunsCoverage")
	}
	stub := svcstub.New(t)
	stub.Arm(svcstub.Fault{Mode: svcstub.Mode500, ApplyTo: []svcstub.Selector{svcstub.OnEvaluate}})
	for i := 0; i < 2; i++ {
		request, _ := http.NewRequest("POST", stub.URL+"/v1/flags/evaluate", strings.NewReader(`{"targetingKey": "user-1"}`))
		request.Header.Set("Authorization", "Bearer project-api-key_go")
		request.Header.Set("Content-Type", "application/json")
		answer, err := http.DefaultClient.Do(request)
		if err != nil {
			t.Fatal(err)
		}
		answer.Body.Close()
		if answer.StatusCode != 500 {
			t.Fatalf("evaluate answered %d, want the armed 500", answer.StatusCode)
		}
	}
}
