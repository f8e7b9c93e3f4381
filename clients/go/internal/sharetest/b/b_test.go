// Package b's test and package a's share one stub: svcstub's TestPackagesOfOneRunShareOneStub
// runs both in one `go test -p 2` and compares the stubs they were given.
package b

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

// TestSharesTheRunsStub writes the BaseURL of its stub as SVCSTUB_SHARE_DIR/b, then waits
// for package a's, so that the two packages' processes run at once.
func TestSharesTheRunsStub(t *testing.T) {
	directory := os.Getenv("SVCSTUB_SHARE_DIR")
	if directory == "" {
		t.Skip("run by svcstub's TestPackagesOfOneRunShareOneStub")
	}
	stub := svcstub.New(t)
	written := filepath.Join(directory, "b.tmp")
	if err := os.WriteFile(written, []byte(stub.BaseURL), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(written, filepath.Join(directory, "b")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(directory, "a")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("package a's test did not run alongside within 20s")
		}
	}
	time.Sleep(time.Second) // both hold the stub a while
	stub.AssertNoRequest(svcstub.AnyRoute)
}
