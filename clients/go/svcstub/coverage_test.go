package svcstub_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

const never429 = "evaluate never met a 429 with Retry-After"

// What a suite that arms only a 500 on evaluate is shown at its end: the stub's summary lines.
const (
	runtimeLine = "svc-stub coverage: runtime 1 of 15 cells met; gaps: evaluate was never answered successfully; " +
		"evaluate never met a 401; evaluate never met a 429 with Retry-After; evaluate never met a timeout (a delay or a hang); " +
		"evaluate never met a malformed answer (invalid_json); and 9 more"
	flagsLine = "svc-stub coverage: fixture flags read 0 of 9; never read: checkout-v2, dark-mode, discount-rate, enterprise-dashboard, legacy-banner, and 4 more"
)

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
	if want := []string{runtimeLine, flagsLine}; !reflect.DeepEqual(coverage.Summary, want) {
		t.Errorf("summary:\n%s\nwant the stub's lines:\n%s", strings.Join(coverage.Summary, "\n"), strings.Join(want, "\n"))
	}
	flags := coverage.Flags
	if flags.Of != 9 || len(flags.Read) != 0 || len(flags.NeverRead) != 9 || flags.NeverRead[0] != "checkout-v2" {
		t.Errorf("flags %+v, want the 9 fixture flags never read, checkout-v2 first (the 500 answered none)", flags)
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
			if !strings.Contains(output, "--- PASS: TestEvaluateFallsBackOnA500") {
				t.Errorf("go test -v does not say the suite's test passed:\n%s", output)
			}
			file := filepath.Join(journals, "github.com/svc-stub/svc-stub/clients/go/internal/coveragetest", "coverage.json")
			if said := "\n" + runtimeLine + "\n" + flagsLine + "\nsvc-stub coverage report: " + file + "\n"; !strings.Contains(output, said) {
				t.Errorf("go test -v does not show the stub's summary lines, then the report's file:%s\nin:\n%s", said, output)
			}
			if !tc.passes && !strings.Contains(output, "svc-stub coverage: runtime 1 of 15 cells met (6.7 %), under 80 %; gaps:\n  - evaluate was never answered successfully\n") {
				t.Errorf("the failed gate is not named:\n%s", output)
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var report svcstub.Coverage
			if err := json.Unmarshal(raw, &report); err != nil || report.Scope != svcstub.ScopeRun || report.Profiles["runtime"].Met != 1 {
				t.Errorf("coverage.json is not the run's coverage (%v):\n%s", err, raw)
			}
			if !strings.Contains(output, strings.Join(report.Summary, "\n")) || !contains(report.Flags.NeverRead, "checkout-v2") {
				t.Errorf("go test -v does not print coverage.json's summary verbatim, or its flags do not name checkout-v2 never read:\n%s", raw)
			}
		})
	}
}
