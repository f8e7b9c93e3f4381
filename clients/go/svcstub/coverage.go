package svcstub

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Scope is whose coverage the stub counts: a namespace's (a test's own) or the whole run's.
type Scope string

const (
	// ScopeNamespace is the namespace's count (kept across a reset): one test's.
	ScopeNamespace Scope = "namespace"
	// ScopeRun is every namespace's count of the run, deleted ones' too.
	ScopeRun Scope = "run"
)

// Coverage is the stub's answer to GET /_test/coverage: each route a client called against each
// outcome it was served, each profile of what a kind of client is expected to meet, held
// against it (its gaps in words), the fixture flags read and never read, and the summary.
type Coverage struct {
	Scope    Scope                      `json:"scope"`
	Cells    []CoverageCell             `json:"cells"`
	Profiles map[string]ProfileCoverage `json:"profiles"`
	Flags    FlagCoverage               `json:"flags"`
	// Summary is the coverage short, in the stub's lines, as every svc-stub helper prints it at
	// a run's end: one for each profile a cell of which was met, naming its first gaps
	// ("svc-stub coverage: runtime 2 of 15 cells met; gaps: evaluate never met a 401; ...; and
	// 8 more"), or one saying no cell of any profile was; then, if the fixtures hold flags, one
	// naming the first never read ("svc-stub coverage: fixture flags read 1 of 9; never read:
	// dark-mode, ..., and 3 more"). Print them as they are: the stub decides their words.
	Summary []string `json:"summary"`
}

// FlagCoverage is the fixture flags requests were answered (Read), those of the fixtures never
// read (NeverRead), each sorted, and how many flags the fixtures hold (Of).
type FlagCoverage struct {
	Read      []string `json:"read"`
	NeverRead []string `json:"neverRead"`
	Of        int      `json:"of"`
}

// CoverageCell is one cell met: a route ("evaluate"), an outcome ("ok", "401", "fault 500",
// "rate limited", "no answer") and how many requests met it.
type CoverageCell struct {
	Route   string `json:"route"`
	Outcome string `json:"outcome"`
	Count   int    `json:"count"`
}

// ProfileCoverage is one profile held against the coverage: Met of Of cells, and the gaps.
type ProfileCoverage struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Met         int           `json:"met"`
	Of          int           `json:"of"`
	Gaps        []CoverageGap `json:"gaps"`
}

// CoverageGap is a cell of a profile never met: its route, the outcomes any of which meets it,
// and the stub's words for it ("evaluate never met a 429 with Retry-After").
type CoverageGap struct {
	Route    string   `json:"route"`
	Expected []string `json:"expected"`
	Says     string   `json:"says"`
}

// Percent is the share of the profile's cells met, 0 to 100 (100 for a profile of no cells).
func (p ProfileCoverage) Percent() float64 {
	if p.Of == 0 {
		return 100
	}
	return 100 * float64(p.Met) / float64(p.Of)
}

// says is the profile's gaps in the stub's words.
func (p ProfileCoverage) says() []string {
	says := make([]string, len(p.Gaps))
	for i, gap := range p.Gaps {
		says[i] = gap.Says
	}
	return says
}

// Gate is nil when profile's cells met are at least percent of its cells; else an error that
// names the profile, the share met and every gap, one a line. A profile the coverage lacks is
// an error too.
func (c Coverage) Gate(profile string, percent float64) error {
	held, ok := c.Profiles[profile]
	if !ok {
		names := make([]string, 0, len(c.Profiles))
		for name := range c.Profiles {
			names = append(names, name)
		}
		sort.Strings(names)
		return fmt.Errorf("svcstub: coverage has no profile %q (it has %q)", profile, names)
	}
	if held.Percent() >= percent {
		return nil
	}
	return fmt.Errorf("svc-stub coverage: %s %d of %d cells met (%.1f %%), under %g %%; gaps:\n  - %s",
		profile, held.Met, held.Of, held.Percent(), percent, strings.Join(held.says(), "\n  - "))
}

// Coverage is what this test's requests met (its namespace's count), every profile held against it.
func (s *Stub) Coverage() Coverage {
	s.tb.Helper()
	coverage, _, err := s.client.Coverage(context.Background(), ScopeNamespace, "")
	s.must(err)
	return coverage
}

// Gate is a Main option: the package fails when the run's coverage of Profile is under Percent.
type Gate struct {
	Profile string
	Percent float64
}

// Main runs the package's tests (m.Run) and returns the exit code for os.Exit; then, if they
// used the run's stub, it reads the run's coverage (GET /_test/coverage?scope=run), prints the
// stub's Summary lines as they came to stdout (shown by go test -v, and when the package fails)
// and writes the stub's answer as coverage.json next to the package's journals, naming the file.
// A gate under its percent fails the package (when its tests passed). The packages of a
// `go test` share one stub, so at a package's end the run's coverage is the run's so far. Call
// it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(svcstub.Main(m)) }
func Main(m *testing.M, gates ...Gate) int {
	code := m.Run()
	if !run.used.Load() {
		return code // no test of this package used the stub: nothing of its to report
	}
	said, failed := report(context.Background(), gates)
	fmt.Println(said)
	if failed && code == 0 {
		fmt.Println("FAIL: svc-stub coverage gate")
		code = 1
	}
	return code
}

// report is what Main prints about the run's coverage, and whether a gate failed.
func report(ctx context.Context, gates []Gate) (string, bool) {
	stubURL, err := RunURL()
	if err != nil {
		return "svc-stub coverage: not read: " + err.Error(), len(gates) > 0
	}
	coverage, raw, err := NewClient(stubURL).Coverage(ctx, ScopeRun, "")
	if err != nil {
		return "svc-stub coverage: not read: " + err.Error(), len(gates) > 0
	}
	lines := append([]string(nil), coverage.Summary...)
	directory, err := journalDirectory()
	file := filepath.Join(directory, "coverage.json")
	if err == nil {
		err = os.WriteFile(file, raw, 0o644)
	}
	if err != nil {
		lines = append(lines, "svc-stub coverage report not written: "+err.Error())
	} else {
		lines = append(lines, "svc-stub coverage report: "+file)
	}
	failed := false
	for _, gate := range gates {
		if err := coverage.Gate(gate.Profile, gate.Percent); err != nil {
			lines = append(lines, err.Error())
			failed = true
		}
	}
	return strings.Join(lines, "\n"), failed
}
