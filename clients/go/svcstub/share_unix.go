//go:build unix

package svcstub

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const sharing = true

// goTestPID is the `go test` process this test binary runs under, or 0 when it runs some
// other way (built with -c, run by hand or by an IDE): then it keeps a stub of its own.
func goTestPID() int {
	parent := os.Getppid()
	name, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", parent))
	if err != nil { // not Linux: ask ps
		name, err = exec.Command("ps", "-o", "comm=", "-p", strconv.Itoa(parent)).Output()
		if err != nil {
			return 0
		}
	}
	if filepath.Base(strings.TrimSpace(string(name))) != "go" {
		return 0
	}
	return parent
}

// sharedStub is the stub of the `go test` run whose PID is owner: started by whichever
// package's process asks first (in a session of its own, so it outlives that process), and
// stopped by the stub itself once `go test` has ended (svc-stub --stop-with). A file lock in
// a directory named after the run decides who starts it; the directory says where it listens.
func sharedStub(owner int) (string, error) {
	removeEnded(owner)
	directory := filepath.Join(os.TempDir(), fmt.Sprintf("svc-stub-go-%d-%d", os.Getuid(), owner))
	if err := os.MkdirAll(directory, 0o700); err != nil {
		return "", &StartError{"svc-stub: " + err.Error()}
	}
	lock, err := os.OpenFile(filepath.Join(directory, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", &StartError{"svc-stub: " + err.Error()}
	}
	defer lock.Close() // releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", &StartError{"svc-stub: " + err.Error()}
	}
	where := filepath.Join(directory, "url")
	if url, err := os.ReadFile(where); err == nil && answers(string(url)) {
		return string(url), nil
	}
	process, err := Start(StartOptions{StopWith: owner, LogDir: directory, Detach: true})
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(where, []byte(process.URL), 0o600); err != nil {
		return "", &StartError{"svc-stub: " + err.Error()}
	}
	return process.URL, nil
}

func answers(url string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return NewClient(url).Health(ctx) == nil
}

// removeEnded removes the directories of runs that have ended (their stubs stopped with them):
// nothing else would, as a run's stub outlives every process of it that could.
func removeEnded(owner int) {
	directories, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("svc-stub-go-%d-*", os.Getuid())))
	for _, directory := range directories {
		pid, err := strconv.Atoi(directory[strings.LastIndex(directory, "-")+1:])
		if err == nil && pid != owner && syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.RemoveAll(directory)
		}
	}
}
