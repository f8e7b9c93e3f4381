//go:build unix

package svcstub_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

// The packages of one `go test` share one stub, and it goes with the run, however the run ends:
// internal/sharetest/a and b each say which stub they were given, and hold it until released.
func TestOneStubForARun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		killed bool // go test, with SIGKILL: it has no say
	}{{"the run ends", false}, {"the run is killed", true}} {
		killed := tc.killed
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			shared := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
			defer cancel()
			run := svcstub.GoTestCommand(ctx, t, "..", map[string]string{"SVCSTUB_SHARE_DIR": shared, svcstub.URLVariable: ""},
				"-p", "2", "./internal/sharetest/...")
			var output strings.Builder
			run.Stdout, run.Stderr = &output, &output
			run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // go test and its packages' processes
			if err := run.Start(); err != nil {
				t.Fatal(err)
			}
			urls := map[string]string{}
			for _, name := range []string{"a", "b"} {
				for ctx.Err() == nil && urls[name] == "" {
					url, _ := os.ReadFile(filepath.Join(shared, name))
					urls[name] = string(url)
					time.Sleep(20 * time.Millisecond)
				}
			}
			if urls["a"] == "" || urls["b"] == "" || urls["a"] != urls["b"] {
				_ = syscall.Kill(-run.Process.Pid, syscall.SIGKILL)
				_ = run.Wait()
				t.Fatalf("package a had the stub at %q, package b the one at %q: want one for the run\n%s", urls["a"], urls["b"], &output)
			}
			if ours, err := svcstub.RunURL(); err == nil && ours == urls["a"] {
				t.Errorf("the child run had this run's stub %s, not one of its own", ours)
			}

			if killed { // go test alone: its packages' processes outlive it, and the stub must not
				defer syscall.Kill(-run.Process.Pid, syscall.SIGKILL) // those orphans, once checked
				_ = run.Process.Kill()
				_ = run.Wait()
			} else if err := os.WriteFile(filepath.Join(shared, "release"), nil, 0o600); err != nil {
				t.Fatal(err)
			} else if err := run.Wait(); err != nil {
				t.Fatalf("go test ./internal/sharetest/... (%v):\n%s", err, &output)
			}
			for client := svcstub.NewClient(urls["a"]); client.Health(ctx) == nil; time.Sleep(20 * time.Millisecond) {
			}
			if ctx.Err() != nil {
				t.Fatalf("the run's stub at %s still answers a minute after its go test ended", urls["a"])
			}
		})
	}
}
