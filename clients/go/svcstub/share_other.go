//go:build !unix

package svcstub

// Without file locks every package's process keeps a stub of its own.
const sharing = false

func goTestPID() int { return 0 }

func sharedStub(int) (string, error) { panic("unreachable") }
