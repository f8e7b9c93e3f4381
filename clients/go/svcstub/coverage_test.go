package svcstub_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

const never429 = "evaluate never met a 429 with Retry-After"

// evaluateTwice is a suite that arms only a 500 on evaluate, and calls evaluate twice.
func evaluateTwice(t *testing.T, stub *svcstub.Stub) {
	t.Helper()
	stub.Arm(svcstub.Fault{Mode: svcstub.Mode500, ApplyTo: []svcstub.Selector{svcstub.OnEvaluate}})
	for i := 0; i < 2; i++ {
		if got := evaluate(t, stub.URL, nil, answerTimeout); got.status != 500 {
			t.Fatalf("evaluate: %d (%v), want the armed 500", got.status, got.err)
		}
	}
}

func TestCoverageNamesTheGaps(t *testing.T) {
	t.Parallel()
	stub := svcstub.New(t)
	evaluateTwice(t, stub)

	coverage := stub.Coverage()
	if coverage.Scope != svcstub.ScopeNamespace {
		t.Errorf("scope %q, want the namespace's", coverage.Scope)
	}
	want := []svcstub.CoverageCell{{Route: "evaluate", Outcome: "fault 500", Count: 2}}
	if len(coverage.Cells) != 1 || coverage.Cells[0] != want[0] {
		t.Errorf("cells %+v, want %+v", coverage.Cells, want)
	}
	runtime := coverage.Profiles["runtime"]
	if runtime.Met != 1 || runtime.Of < 2 {
		t.Errorf("runtime: %d of %d met, want 1", runtime.Met, runtime.Of)
	}
	summary := coverage.Summary()
	for _, words := range []string{"svc-stub coverage: runtime 1 of 15 cells met; gaps: ", never429, "; and 9 more"} {
		if !strings.Contains(summary, words) {
			t.Errorf("the summary does not say %q:\n%s", words, summary)
		}
	}
	if strings.Contains(summary, "vendor") || !strings.Contains(coverage.Summary("vendor"), "vendor 0 of ") {
		t.Errorf("the summary names a profile the test met no cell of, or does not name one asked for:\n%s", summary)
	}
	if strings.Count(summary, "\n") != 0 || strings.Contains(summary, "capture never met a 401") {
		t.Errorf("the summary is not one line naming the first 5 gaps:\n%s", summary)
	}
	if strings.Contains(summary, "evaluate never met the backend unavailable") {
		t.Errorf("the summary names the 500 the test did meet as a gap:\n%s", summary)
	}

	low := 100 * float64(runtime.Met) / float64(runtime.Of)
	if err := coverage.Gate("runtime", low); err != nil {
		t.Errorf("Gate at %g%% (what was met): %v", low, err)
	}
	err := coverage.Gate("runtime", 80)
	if err == nil || !strings.Contains(err.Error(), never429) || !strings.Contains(err.Error(), "under 80 %") {
		t.Errorf("Gate at 80%%: %v, want it to fail naming %q", err, never429)
	}
	if err := coverage.Gate("no-such-profile", 0); err == nil {
		t.Error("Gate of a profile the stub does not have passed")
	}
}

// A package whose TestMain is svcstub.Main prints the run's coverage at its end (go test -v),
// writes the stub's answer next to its journals, and fails under a gate.
func TestMainPrintsTheRunsCoverage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, gate string
		passes     bool
	}{{"no gate", "", true}, {"a gate it meets", "5", true}, {"a gate it misses", "80", false}} {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			journals := t.TempDir()
			env := map[string]string{
				"SVCSTUB_COVERAGE_CHILD": "1", "SVCSTUB_COVERAGE_GATE": tc.gate,
				svcstub.JournalVariable: journals, svcstub.URLVariable: "", // a stub of the child run's own
			}
			output, err := svcstub.GoTest(t, "..", env, "-v", "./internal/coveragetest")
			if (err == nil) != tc.passes {
				t.Fatalf("go test (gate %q) ended with %v, want it to pass: %v\n%s", tc.gate, err, tc.passes, output)
			}
			for _, words := range []string{"--- PASS: TestEvaluateFallsBackOnA500", "svc-stub coverage: runtime 1 of 15 cells met; gaps: ", never429} {
				if !strings.Contains(output, words) {
					t.Errorf("go test -v does not say %q:\n%s", words, output)
				}
			}
			if !tc.passes && !strings.Contains(output, "svc-stub coverage: runtime 1 of 15 cells met (6.7 %), under 80 %; gaps:\n  - evaluate was never answered successfully\n") {
				t.Errorf("the failed gate is not named:\n%s", output)
			}
			file := filepath.Join(journals, "github.com/svc-stub/svc-stub/clients/go/internal/coveragetest", "coverage.json")
			if !strings.Contains(output, "svc-stub coverage report: "+file) {
				t.Errorf("go test -v does not name %s:\n%s", file, output)
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var report svcstub.Coverage
			if err := json.Unmarshal(raw, &report); err != nil || report.Scope != svcstub.ScopeRun || report.Profiles["runtime"].Met != 1 {
				t.Errorf("coverage.json is not the run's coverage (%v):\n%s", err, raw)
			}
		})
	}
}
