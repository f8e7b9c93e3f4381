// Every way the run's stub can be missing, each one line that says what to do.
package svcstub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serving is the URL of a server answering every request with handler, closed when the test ends.
func serving(t *testing.T, handler http.HandlerFunc) string {
	t.Helper()
	server := httptest.NewServer(handler)
	t.Cleanup(server.Close)
	return server.URL
}

// closedURL is a URL nothing listens at.
// closedURL is the run's stub's offline address: a port it holds bound and never listens on, so
// a connection is refused however many tests open and close listeners meanwhile (a port a test
// server had closed can be handed to the next one, which answers).
func closedURL(t *testing.T) string {
	t.Helper()
	running, err := RunURL()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	offline, err := NewClient(running).Offline(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return offline
}

// fakeBin is an svc-stub command that runs script (sh), as SVC_STUB_BIN for the rest of the test.
func fakeBin(t *testing.T, script string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake svc-stub is a shell script")
	}
	bin := filepath.Join(t.TempDir(), "svc-stub")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinVariable, bin)
	return bin
}

func TestTheRunsStubIsSvcStubShared(t *testing.T) {
	said := filepath.Join(t.TempDir(), "args")
	fakeBin(t, `echo "$@" > `+said+`; echo "svc-stub listening on http://127.0.0.1:4321"`)
	url, err := sharedStub()
	if err != nil || url != "http://127.0.0.1:4321" {
		t.Fatalf("sharedStub() = %q, %v; want the URL of its ready line", url, err)
	}
	if args := strings.TrimSpace(readFile(t, said)); args != "shared --owner-named go --require "+Version {
		t.Errorf("it ran svc-stub %s", args)
	}
}

func TestSharedStubFailuresAreOneLine(t *testing.T) {
	root, err := filepath.Abs("../../..") // this package's clone of svc-stub
	if err != nil {
		t.Fatal(err)
	}
	install := "install it from its clone (python3 -m venv .venv && .venv/bin/pip install " + root +
		") and set SVC_STUB_BIN=$PWD/.venv/bin/svc-stub, or SVC_STUB_URL to a running stub"
	for _, tc := range []struct {
		name   string
		script string // "" for no svc-stub command
		want   string
	}{
		{"SVC_STUB_BIN names no command", "",
			"svc-stub: no svc-stub command (SVC_STUB_BIN=/nonexistent/svc-stub is not one); " + install},
		{"the command's own words", `echo "svc-stub: error: shared: this svc-stub is 0.0.9, older than the 0.1.0 the helper needs" >&2; exit 2`,
			"svc-stub: error: shared: this svc-stub is 0.0.9, older than the 0.1.0 the helper needs"},
		{"a command that is not svc-stub shared", `echo "Usage: svc-stub [OPTIONS]"; echo "Error: Got unexpected extra arguments" >&2; exit 2`,
			"svc-stub: {bin} shared: exit status 2 Error: Got unexpected extra arguments"},
		{"no ready line", `echo hello`, `svc-stub: {bin} shared printed "hello\n", not its ready line`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := "/nonexistent/svc-stub"
			if tc.script == "" {
				t.Setenv(BinVariable, bin)
			} else {
				bin = fakeBin(t, tc.script)
			}
			_, err := sharedStub()
			var startErr *StartError
			if want := strings.ReplaceAll(tc.want, "{bin}", bin); !errors.As(err, &startErr) || err.Error() != want {
				t.Errorf("err = %T %q\nwant a *StartError %q", err, err, want)
			}
		})
	}
	t.Run("none on PATH", func(t *testing.T) {
		t.Setenv(BinVariable, "")
		t.Setenv("PATH", t.TempDir())
		want := "svc-stub: no svc-stub command (SVC_STUB_BIN is not set and none is on PATH); " + install
		if _, err := sharedStub(); err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
	})
}

func TestARunsStubThatDoesNotStartSaysWhyInOneLine(t *testing.T) {
	t.Setenv("SVC_STUB_FIXTURES", "/nonexistent/flags.yaml") // another run's key than this run's stub
	_, err := sharedStub()
	if err == nil || !strings.HasPrefix(err.Error(), "svc-stub: error: ") || !strings.Contains(err.Error(), "/nonexistent/flags.yaml") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %q, want the stub's one line naming the fixture file it cannot read", err)
	}
}

func TestAStubAtSVCStubURLIsCheckedWithOneLine(t *testing.T) {
	t.Parallel()
	closed := closedURL(t)
	notFound := serving(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<h1>Not Found</h1>")
	})
	claiming := func(version string) string {
		return serving(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if r.URL.Path == "/health" {
				fmt.Fprint(w, `{"ok": true}`)
				return
			}
			fmt.Fprintf(w, `{"info": {"version": %q}}`, version)
		})
	}
	older, newer := claiming("0.0.9"), claiming("0.10.0")
	root, _ := filepath.Abs("../../..")
	running, err := RunURL()
	if err != nil {
		t.Fatal(err)
	}
	use := "start one there (svc-stub --port PORT) or unset SVC_STUB_URL to have one started"
	for _, tc := range []struct {
		name, url, want string
	}{
		{"nothing answers", closed, fmt.Sprintf("svc-stub: SVC_STUB_URL=%s does not answer as svc-stub (connection refused); %s", closed, use)},
		{"something else answers", notFound, fmt.Sprintf("svc-stub: SVC_STUB_URL=%s does not answer as svc-stub (404 from /health: <h1>Not Found</h1>); %s", notFound, use)},
		{"an older stub", older, fmt.Sprintf("svc-stub: SVC_STUB_URL=%s is svc-stub 0.0.9, older than this package (%s); upgrade it (pip install --upgrade %s)", older, Version, root)},
		{"a newer stub", newer, ""},
		{"the run's stub", running, ""},
	} {
		err := checkStub(tc.url)
		if got := fmt.Sprint(err); err == nil && tc.want != "" || err != nil && got != tc.want {
			t.Errorf("%s: checkStub = %v\nwant %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: not one line: %q", tc.name, err)
		}
	}
}

func TestRecentEnoughComparesNumbers(t *testing.T) {
	for version, want := range map[string]bool{
		Version: true, "0.1.1": true, "0.10.0": true, "v1.0.0": true, "0.2.0rc1": true,
		"0.0.9": false, "0.0.10": false, "1.0": false, "": false, "latest": false,
	} {
		if got := recentEnough(version); got != want {
			t.Errorf("recentEnough(%q) = %t, want %t", version, got, want)
		}
	}
}

// compatibilityPath is the one rule of which stub a helper accepts, with the cases every
// language's helper runs.
const compatibilityPath = "../../compatibility.json"

func TestCompatibleFollowsTheSharedRuleInEveryCase(t *testing.T) {
	text, err := os.ReadFile(compatibilityPath)
	if err != nil {
		t.Fatal(err)
	}
	var rule struct {
		Cases []struct {
			Stub, Helper string
			Compatible   bool
		}
	}
	if err := json.Unmarshal(text, &rule); err != nil || len(rule.Cases) == 0 {
		t.Fatalf("%s: %v (%d cases)", compatibilityPath, err, len(rule.Cases))
	}
	for _, c := range rule.Cases {
		if got := compatible(c.Stub, c.Helper); got != c.Compatible {
			t.Errorf("compatible(stub %q, helper %q) = %t, %s says %t", c.Stub, c.Helper, got, compatibilityPath, c.Compatible)
		}
	}
}

func TestTheControlClientAtADeadURLSaysSoInOneLine(t *testing.T) {
	t.Parallel()
	closed := closedURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	_, err := NewClient(closed).Armed(ctx)
	var unreachable *UnreachableError
	port := closed[strings.LastIndex(closed, ":")+1:]
	want := fmt.Sprintf("svc-stub at %s does not answer (connection refused); start one there (svc-stub --port %s) or correct the URL", closed, port)
	if !errors.As(err, &unreachable) || err.Error() != want {
		t.Errorf("err = %T %q\nwant an *UnreachableError %q", err, err, want)
	}
	var dial *net.OpError
	if !errors.Is(err, syscall.ECONNREFUSED) || !errors.As(err, &dial) || dial.Op != "dial" {
		t.Errorf("err = %v; want it to unwrap to the refused dial", err)
	}
	if got := reasonOf(fmt.Errorf("dial: %w", syscall.ECONNREFUSED)); got != "connection refused" {
		t.Errorf("reasonOf(ECONNREFUSED) = %q", got) // matched as an errno, not by its words
	}
	if got := reasonOf(errors.New("connection refused, said the text")); got != "connection refused, said the text" {
		t.Errorf("reasonOf(text) = %q", got)
	}
}

func TestAnAnswerThatIsNotJSONIsNotUnreachable(t *testing.T) {
	t.Parallel()
	page := serving(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<h1>Welcome</h1>")
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	_, err := NewClient(page).Armed(ctx)
	var undecoded *DecodeError
	var syntax *json.SyntaxError
	var unreachable *UnreachableError
	if !errors.As(err, &undecoded) || undecoded.Path != "/_test/fault" || !errors.As(err, &syntax) || errors.As(err, &unreachable) {
		t.Errorf("err = %T %v; want a *DecodeError of /_test/fault wrapping a *json.SyntaxError", err, err)
	}
	if want := fmt.Sprintf("svc-stub at %s: /_test/fault answers something other than svc-stub's JSON (invalid character '<' looking for beginning of value)", page); fmt.Sprint(err) != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if want := fmt.Sprintf("svc-stub: SVC_STUB_URL=%s does not answer as svc-stub (/health answers something other than svc-stub's JSON); start one there (svc-stub --port PORT) or unset SVC_STUB_URL to have one started", page); fmt.Sprint(checkStub(page)) != want {
		t.Errorf("checkStub = %v\nwant %s", checkStub(page), want)
	}
}

// fatalRecorder is a testing.TB whose Fatal keeps what it said and ends the goroutine, as
// t.Fatal does; the rest is the real test's.
type fatalRecorder struct {
	testing.TB
	said string
}

func (r *fatalRecorder) Helper()        {}
func (r *fatalRecorder) Fatal(a ...any) { r.said = fmt.Sprint(a...); runtime.Goexit() }
func (r *fatalRecorder) Fatalf(format string, a ...any) {
	r.said = fmt.Sprintf(format, a...)
	runtime.Goexit()
}

// fatalOf is what body's Fatal said ("" if it did not fail).
func fatalOf(t *testing.T, body func(tb testing.TB)) string {
	recorder := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		body(recorder)
	}()
	<-done
	return recorder.said
}

func TestAStubsFailureSaysSvcstubOnce(t *testing.T) {
	t.Parallel()
	missing := "svcstub: fixtures: open testdata/missing.yaml: no such file or directory"
	for _, tc := range []struct {
		name string
		body func(tb testing.TB)
		want string
	}{
		{"New, WithFixtures", func(tb testing.TB) { New(tb, WithFixtures("testdata/missing.yaml")) }, missing},
		{"SetFixtures", func(tb testing.TB) { New(tb).SetFixtures("testdata/missing.yaml") }, missing},
		{"Arm", func(tb testing.TB) { New(tb).Arm(Fault{Mode: "500s"}) }, `svcstub: unknown fault mode "500s"; the modes are [delay 401`},
		{"a fixture the stub refuses", func(tb testing.TB) {
			New(tb).SetFixtures(map[string]any{"flags": map[string]any{"bad": map[string]any{"type": "colour"}}})
		}, "svcstub: 400 INVALID_FIXTURES: body: flags.bad."},
	} {
		if said := fatalOf(t, tc.body); !strings.HasPrefix(said, tc.want) {
			t.Errorf("%s: the test failed with %q\nwant %q...", tc.name, said, tc.want)
		}
	}
}

// TestChildNewWithoutAStub fails on purpose: TestNewFailsTheTestInOneLineWithoutAStub runs it
// in a `go test` of its own with no stub to be had.
func TestChildNewWithoutAStub(t *testing.T) {
	if os.Getenv("SVCSTUB_CHILD") != "no-stub" {
		t.Skip("fails on purpose; TestNewFailsTheTestInOneLineWithoutAStub runs it")
	}
	New(t)
	t.Error("New returned without a stub")
}

func TestNewFailsTheTestInOneLineWithoutAStub(t *testing.T) {
	t.Parallel()
	var path []string // PATH without svc-stub
	for _, directory := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(directory, "svc-stub")); err != nil {
			path = append(path, directory)
		}
	}
	output, err := GoTest(t, ".", map[string]string{
		"SVCSTUB_CHILD": "no-stub", BinVariable: "", URLVariable: "",
		"PATH": strings.Join(path, string(filepath.ListSeparator)),
	}, "-run", "^TestChildNewWithoutAStub$", "-v", ".")
	line := 0
	for i, text := range strings.Split(readFile(t, "errors_test.go"), "\n") {
		if strings.TrimSpace(text) == "New(t)" {
			line = i + 1
		}
	}
	root, _ := filepath.Abs("../../..")
	want := fmt.Sprintf("=== RUN   TestChildNewWithoutAStub\n"+
		"    errors_test.go:%d: svc-stub: no svc-stub command (SVC_STUB_BIN is not set and none is on PATH); "+
		"install it from its clone (python3 -m venv .venv && .venv/bin/pip install %s) and set SVC_STUB_BIN=$PWD/.venv/bin/svc-stub, "+
		"or SVC_STUB_URL to a running stub\n"+
		"--- FAIL: TestChildNewWithoutAStub", line, root)
	if err == nil || !strings.Contains(output, want) {
		t.Errorf("the child test (%v) printed:\n%s\nwant in it:\n%s", err, output, want)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}
