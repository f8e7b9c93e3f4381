package svcstub

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// The environment a test run reads.
const (
	// URLVariable names a stub already running, used instead of starting one.
	URLVariable = "SVC_STUB_URL"
	// TokenVariable is that stub's --control-token, if it has one.
	TokenVariable = "SVC_STUB_CONTROL_TOKEN"
	// JournalVariable is where failed tests' journals go (default svc-stub-journal).
	JournalVariable = "SVC_STUB_JOURNAL_DIR"
)

// Version is svc-stub's version: the stub's and this package's. A stub older than it is refused.
const Version = "0.1.0"

var run struct {
	once sync.Once
	url  string
	err  error
	own  *Process // a stub this process started for itself, stopped by Main
}

// RunURL is the stub of this test run, started on first use: the one at SVC_STUB_URL; else
// the one the packages of this `go test` share (each package is a process of its own: the
// first to need a stub starts it, and it stops when `go test` ends); else one of this
// process's own. The stub reads its options from SVC_STUB_* variables too
// (SVC_STUB_FIXTURES=flags.yaml).
func RunURL() (string, error) {
	run.once.Do(func() { run.url, run.err = runStub() })
	return run.url, run.err
}

// Main runs the tests of a TestMain and then stops a stub this process started for itself
// (a stub shared with other packages stops when `go test` ends):
//
//	func TestMain(m *testing.M) { os.Exit(svcstub.Main(m)) }
//
// Without it the stub starts on first use all the same, and stops once this process has ended.
func Main(m *testing.M) int {
	code := m.Run()
	if run.own != nil {
		_ = run.own.Stop()
	}
	return code
}

func runStub() (string, error) {
	if running := strings.TrimRight(os.Getenv(URLVariable), "/"); running != "" {
		return running, checkStub(running, URLVariable+"="+running)
	}
	if goTest := goTestPID(); goTest != 0 && sharing {
		url, err := sharedStub(goTest)
		if err != nil {
			return "", err
		}
		return url, checkStub(url, url)
	}
	process, err := Start(StartOptions{})
	if err != nil {
		return "", err
	}
	run.own = process
	return process.URL, checkStub(process.URL, process.URL)
}

// checkStub: the stub at url answers as svc-stub and is not older than this package, or one
// line that says what to do. named is how the line names it.
func checkStub(url, named string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := NewClient(url)
	advice := "its log says why"
	if strings.HasPrefix(named, URLVariable) {
		advice = "start one there (svc-stub --port PORT) or unset " + URLVariable + " to have one started"
	}
	err := client.Health(ctx)
	version := ""
	if err == nil {
		version, err = client.Version(ctx)
	}
	if err != nil {
		return fmt.Errorf("svc-stub: %s does not answer as svc-stub (%s); %s", named, problem(err), advice)
	}
	if !recentEnough(version) {
		return fmt.Errorf("svc-stub: %s is svc-stub %s, older than this package (%s); upgrade it (pip install -U svc-stub)", named, version, Version)
	}
	return nil
}

func problem(err error) string {
	switch err := err.(type) {
	case *UnreachableError:
		return err.Reason
	case *StubError:
		return fmt.Sprintf("%d from /health: %s", err.Status, err.Message)
	}
	return err.Error()
}

// recentEnough: version is at least Version, numerically.
func recentEnough(version string) bool {
	have, need := strings.SplitN(version, ".", 3), strings.SplitN(Version, ".", 3)
	for i := 0; i < 3; i++ {
		var a, b int
		if i < len(have) {
			if _, err := fmt.Sscanf(have[i], "%d", &a); err != nil {
				return false
			}
		}
		if i < len(need) {
			fmt.Sscanf(need[i], "%d", &b)
		}
		if a != b {
			return a > b
		}
	}
	return true
}
