package svcstub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The environment a test run reads.
const (
	// URLVariable names a stub already running, used instead of the run's own.
	URLVariable = "SVC_STUB_URL"
	// TokenVariable is that stub's --control-token, if it has one.
	TokenVariable = "SVC_STUB_CONTROL_TOKEN"
	// BinVariable names the svc-stub command when it is not on PATH.
	BinVariable = "SVC_STUB_BIN"
	// JournalVariable is where failed tests' journals go instead of the temporary directory.
	JournalVariable = "SVC_STUB_JOURNAL_DIR"
)

// Version is svc-stub's version: the stub's and this package's. A stub older than it is refused.
const Version = "0.1.0"

// ReadyPrefix starts the line `svc-stub shared` prints; the rest is the stub's URL.
const ReadyPrefix = "svc-stub listening on "

var run struct {
	once sync.Once
	url  string
	err  error
	used atomic.Bool // a test of this process used the run's stub
}

// RunURL is the stub of this test run: the one at SVC_STUB_URL, else the one `svc-stub shared`
// starts for the `go test` this process runs under, or attaches to if another package's
// process started it first (not under `go test`: one for this process). The stub decides how
// a run shares it and stops it when the run ends, however it ends. It reads its options from
// SVC_STUB_* variables (SVC_STUB_FIXTURES=flags.yaml).
func RunURL() (string, error) {
	run.once.Do(func() {
		if running := strings.TrimRight(os.Getenv(URLVariable), "/"); running != "" {
			run.url, run.err = running, checkStub(running)
		} else {
			run.url, run.err = sharedStub()
		}
	})
	if run.err == nil {
		run.used.Store(true)
	}
	return run.url, run.err
}

// sharedStub runs `svc-stub shared` and reads the URL from its one line.
func sharedStub() (string, error) {
	bin, name := os.Getenv(BinVariable), "svc-stub"
	if bin != "" {
		name = bin
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", &StartError{noCommand(bin)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard only
	defer cancel()
	var stdout, stderr bytes.Buffer
	command := exec.CommandContext(ctx, path, "shared", "--owner-named", "go", "--require", Version)
	command.Stdout, command.Stderr = &stdout, &stderr
	command.WaitDelay = time.Second // once it has exited, whatever else holds its output
	err = command.Run()
	said := strings.TrimSpace(stderr.String())
	said = said[strings.LastIndex(said, "\n")+1:]
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && strings.HasPrefix(said, "svc-stub"):
		return "", &StartError{said} // the stub's own words
	case err != nil:
		return "", &StartError{strings.TrimSpace(fmt.Sprintf("svc-stub: %s shared: %v %s", path, err, said))}
	case !strings.HasPrefix(stdout.String(), ReadyPrefix):
		return "", &StartError{fmt.Sprintf("svc-stub: %s shared printed %q, not its ready line", path, stdout.String())}
	}
	return strings.TrimSpace(strings.TrimPrefix(stdout.String(), ReadyPrefix)), nil
}

// noCommand says how to install svc-stub: from this package's clone, when it is in one. The
// path it names is absolute, as `go test` runs each package in its own folder.
func noCommand(bin string) string {
	why := BinVariable + " is not set and none is on PATH"
	if bin != "" {
		why = fmt.Sprintf("%s=%s is not one", BinVariable, bin)
	}
	return fmt.Sprintf("svc-stub: no svc-stub command (%s); install it from its clone "+
		"(python3 -m venv .venv && .venv/bin/pip install %s) and set %s=$PWD/.venv/bin/svc-stub, or %s to a running stub",
		why, clone(), BinVariable, URLVariable)
}

// clone is the svc-stub clone this package is built from (it lives in clients/go), if it is.
func clone() string {
	if _, file, _, ok := runtime.Caller(0); ok {
		root := filepath.Join(filepath.Dir(file), "..", "..", "..")
		if project, err := os.ReadFile(filepath.Join(root, "pyproject.toml")); err == nil && bytes.Contains(project, []byte(`name = "svc-stub"`)) {
			return filepath.Clean(root)
		}
	}
	return "path/to/svc-stub"
}

// checkStub: the stub at SVC_STUB_URL answers as svc-stub and is not older than this package,
// or one line that says what to do.
func checkStub(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := NewClient(url)
	err := client.Health(ctx)
	version := ""
	if err == nil {
		version, err = client.Version(ctx)
	}
	if err != nil {
		return fmt.Errorf("svc-stub: %s=%s does not answer as svc-stub (%s); start one there (svc-stub --port PORT) or unset %s to have one started",
			URLVariable, url, problem(err), URLVariable)
	}
	if !recentEnough(version) {
		return fmt.Errorf("svc-stub: %s=%s is svc-stub %s, older than this package (%s); upgrade it (pip install --upgrade %s)",
			URLVariable, url, version, Version, clone())
	}
	return nil
}

// problem is why a stub does not answer as svc-stub, in a few words.
func problem(err error) string {
	var unreachable *UnreachableError
	var refused *StubError
	var undecoded *DecodeError
	switch {
	case errors.As(err, &unreachable):
		return unreachable.Reason
	case errors.As(err, &refused):
		return fmt.Sprintf("%d from /health: %s", refused.Status, refused.Message)
	case errors.As(err, &undecoded):
		return undecoded.Path + " answers something other than svc-stub's JSON"
	}
	return err.Error()
}

// recentEnough: a stub of this version works with this package (compatible with Version).
func recentEnough(version string) bool { return compatible(version, Version) }

// release is a version's numbers and whether it is a prerelease of them: v0.1.0, 0.1.0,
// 0.2.0-rc.1 (SemVer), 0.2.0rc1 or 0.1.0.dev1 (Python's), with +build metadata ignored.
var release = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+|\.?[A-Za-z][0-9A-Za-z.-]*)?(?:\+[0-9A-Za-z.-]*)?$`)

// compatible is the one rule of clients/compatibility.json, decided in the stub (svc-stub
// shared --require): a stub whose numbers are at least the helper's; at equal numbers a
// prerelease stub is older than a final helper, and prereleases of them go together. Anything
// that is not a version is not compatible.
func compatible(stub, helper string) bool {
	have, need := release.FindStringSubmatch(stub), release.FindStringSubmatch(helper)
	if have == nil || need == nil {
		return false
	}
	for i := 1; i <= 3; i++ {
		a, errA := strconv.Atoi(have[i])
		b, errB := strconv.Atoi(need[i])
		if errA != nil || errB != nil {
			return false
		}
		if a != b {
			return a > b
		}
	}
	return have[4] == "" || need[4] != ""
}
