// Package sharetest is what packages a and b test: svcstub's TestOneStubForARun runs both in
// one `go test -p 2` and compares the stubs they were given. Each is a process of its own, as
// every package of a `go test` is.
package sharetest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

// SharesTheRunsStub writes the BaseURL of the test's stub as SVCSTUB_SHARE_DIR/me, then holds
// it until SVCSTUB_SHARE_DIR/release exists (the parent test ends the run or kills it).
func SharesTheRunsStub(t *testing.T, me string) {
	t.Helper()
	directory := os.Getenv("SVCSTUB_SHARE_DIR")
	if directory == "" {
		t.Skip("run by svcstub's TestOneStubForARun")
	}
	stub := svcstub.New(t)
	written := filepath.Join(directory, me+".tmp")
	if err := os.WriteFile(written, []byte(stub.BaseURL), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(written, filepath.Join(directory, me)); err != nil {
		t.Fatal(err)
	}
	for hangGuard := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(directory, "release")); err == nil {
			return
		}
		if time.Now().After(hangGuard) {
			t.Fatal("not released within a minute")
		}
	}
}
