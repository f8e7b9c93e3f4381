package svcstub

// Test-only: what both this package's tests and its external tests (svcstub_test) use.

import (
	"context"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// GoTest runs `go test -count=1 args...` in dir as this test binary was built (-race if it
// was), with env's variables set ("" unsets one); its output, and how it ended.
func GoTest(t *testing.T, dir string, env map[string]string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a hang guard
	defer cancel()
	command := GoTestCommand(ctx, t, dir, env, args...)
	output, err := command.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("go test %s did not end within 60s:\n%s", strings.Join(args, " "), output)
	}
	return string(output), err
}

// GoTestCommand is GoTest's command, not started.
func GoTestCommand(ctx context.Context, t *testing.T, dir string, env map[string]string, args ...string) *exec.Cmd {
	t.Helper()
	goCommand, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to run a child test: %v", err)
	}
	flags := []string{"test", "-count=1"}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, setting := range info.Settings {
			if setting.Key == "-race" && setting.Value == "true" {
				flags = append(flags, "-race") // the parent's build cache serves the child
			}
		}
	}
	command := exec.CommandContext(ctx, goCommand, append(flags, args...)...)
	command.Dir = dir
	command.Env = environment(env)
	return command
}

// environment is this process's environment with env's variables set ("" unsets one).
func environment(env map[string]string) []string {
	var kept []string
	for _, variable := range os.Environ() {
		if _, replaced := env[strings.SplitN(variable, "=", 2)[0]]; !replaced {
			kept = append(kept, variable)
		}
	}
	for name, value := range env {
		if value != "" {
			kept = append(kept, name+"="+value)
		}
	}
	return kept
}
