package svcstub_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

// The packages of one `go test` share one stub, started by the first to need it, and it ends
// with the run: internal/sharetest/a and b each record the stub they were given.
func TestPackagesOfOneRunShareOneStub(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("without file locks each package keeps a stub of its own")
	}
	t.Parallel()
	shared := t.TempDir()
	output, err := svcstub.GoTest(t, "..", map[string]string{"SVCSTUB_SHARE_DIR": shared, svcstub.URLVariable: ""},
		"-p", "2", "-v", "./internal/sharetest/...")
	if err != nil {
		t.Fatalf("go test ./internal/sharetest/... (%v):\n%s", err, output)
	}
	var urls []string
	for _, name := range []string{"a", "b"} {
		url, err := os.ReadFile(filepath.Join(shared, name))
		if err != nil {
			t.Fatalf("package %s did not say which stub it had: %v\n%s", name, err, output)
		}
		urls = append(urls, string(url))
	}
	if urls[0] != urls[1] {
		t.Fatalf("package a had the stub at %s, package b the one at %s: want one for the run", urls[0], urls[1])
	}
	if ours, err := svcstub.RunURL(); err == nil && ours == urls[0] {
		t.Errorf("the child run had this run's stub %s, not one of its own", ours)
	}

	client := svcstub.NewClient(urls[0])
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := client.Health(ctx)
		cancel()
		if err != nil {
			break // it stopped with the run
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run's stub at %s still answers 3s after its go test ended", urls[0])
		}
	}
}
