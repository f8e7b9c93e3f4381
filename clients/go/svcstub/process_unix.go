//go:build unix

package svcstub

import (
	"os"
	"os/exec"
	"syscall"
)

func detach(cmd *exec.Cmd, detached bool) {
	if detached { // a session of its own: no signal meant for this process group reaches it
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
}

func terminate(process *os.Process) error { return process.Signal(syscall.SIGTERM) }
