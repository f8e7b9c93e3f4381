//go:build !unix

package svcstub

import (
	"os"
	"os/exec"
)

func detach(*exec.Cmd, bool) {}

func terminate(process *os.Process) error { return process.Kill() }
