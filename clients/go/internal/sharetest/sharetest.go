// Package sharetest is what packages a and b test: svcstub's TestPackagesOfOneRunShareOneStub
// runs both in one `go test -p 2` and compares the stubs they were given. Each is a process
// of its own, as every package of a `go test` is.
package sharetest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

// SharesTheRunsStub writes the BaseURL of the test's stub as SVCSTUB_SHARE_DIR/me, then waits
// for the other package's, so that the two packages' processes run at once.
func SharesTheRunsStub(t *testing.T, me, other string) {
	t.Helper()
	directory := os.Getenv("SVCSTUB_SHARE_DIR")
	if directory == "" {
		t.Skip("run by svcstub's TestPackagesOfOneRunShareOneStub")
	}
	stub := svcstub.New(t)
	written := filepath.Join(directory, me+".tmp")
	if err := os.WriteFile(written, []byte(stub.BaseURL), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(written, filepath.Join(directory, me)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(directory, other)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("package %s's test did not run alongside within 20s", other)
		}
	}
	time.Sleep(time.Second) // both hold the stub a while
	stub.AssertNoRequest(svcstub.AnyRoute)
}
