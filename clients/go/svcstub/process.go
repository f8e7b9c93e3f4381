package svcstub

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ReadyPrefix starts the first line a stub prints, once its port is bound; the rest is its URL.
const ReadyPrefix = "svc-stub listening on "

// BinVariable names the svc-stub to run when it is not on PATH.
const BinVariable = "SVC_STUB_BIN"

const startTimeout = 30 * time.Second

// Process is a stub this process started.
type Process struct {
	URL     string
	LogPath string // its stderr, kept until it is stopped
	cmd     *exec.Cmd
}

// StartOptions say how to start a stub.
type StartOptions struct {
	// Args are more svc-stub options (--fixtures flags.yaml, --strict-keys).
	Args []string
	// Bin is the command; default SVC_STUB_BIN, else svc-stub from PATH.
	Bin string
	// StopWith is the process whose end stops the stub (svc-stub --stop-with): default this one.
	StopWith int
	// LogDir holds the stub's log; default a new temporary directory, removed by Stop.
	LogDir string
	// Detach starts the stub in a session of its own, so it outlives this process (until StopWith ends).
	Detach bool
}

// Start starts svc-stub --port 0 and waits for its ready line.
func Start(options StartOptions) (*Process, error) {
	bin := options.Bin
	if bin == "" {
		bin = os.Getenv(BinVariable)
	}
	if bin == "" {
		bin = "svc-stub"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, &StartError{fmt.Sprintf("svc-stub: no '%s' to run; install it (pip install svc-stub) or set %s to its path", bin, BinVariable)}
	}
	stopWith := options.StopWith
	if stopWith == 0 {
		stopWith = os.Getpid()
	}
	logDir := options.LogDir
	started := false
	if logDir == "" {
		if logDir, err = os.MkdirTemp("", "svc-stub-"); err != nil {
			return nil, &StartError{"svc-stub: " + err.Error()}
		}
		defer func() {
			if !started {
				_ = os.RemoveAll(logDir) // what a failed start logged is in its error by now
			}
		}()
	}
	logPath := filepath.Join(logDir, "stub.log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, &StartError{"svc-stub: " + err.Error()}
	}
	defer log.Close() // the child has its own copy
	args := append([]string{"--host", "127.0.0.1", "--port", "0", "--stop-with", strconv.Itoa(stopWith)}, options.Args...)
	cmd := exec.Command(path, args...)
	cmd.Stderr = log
	detach(cmd, options.Detach)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, &StartError{"svc-stub: " + err.Error()}
	}
	if err := cmd.Start(); err != nil {
		return nil, &StartError{fmt.Sprintf("svc-stub: could not run '%s': %v", path, err)}
	}
	url, err := readyURL(cmd, stdout, logPath)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }() // it says nothing more; never let a pipe fill
	started = true
	return &Process{URL: url, LogPath: logPath, cmd: cmd}, nil
}

// PID is the stub's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Stop stops the stub: SIGTERM, then SIGKILL after 5 s.
func (p *Process) Stop() error {
	defer os.RemoveAll(filepath.Dir(p.LogPath))
	if err := terminate(p.cmd.Process); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
		return nil
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
		return nil
	}
}

func readyURL(cmd *exec.Cmd, stdout io.Reader, logPath string) (string, error) {
	type line struct {
		text string
		err  error
	}
	read := make(chan line, 1)
	go func() {
		text, err := bufio.NewReader(stdout).ReadString('\n')
		read <- line{text, err}
	}()
	select {
	case got := <-read:
		if strings.HasPrefix(got.text, ReadyPrefix) {
			return strings.TrimSpace(strings.TrimPrefix(got.text, ReadyPrefix)), nil
		}
		if got.text != "" {
			return "", &StartError{fmt.Sprintf("svc-stub did not start: it printed %q", got.text)}
		}
		state, _ := cmd.Process.Wait()
		how := "it exited"
		if state != nil {
			how = fmt.Sprintf("exit code %d", state.ExitCode())
		}
		said := lastLine(logPath)
		if said == "" {
			said = "it printed nothing"
		}
		return "", &StartError{fmt.Sprintf("svc-stub did not start (%s): %s", how, said)}
	case <-time.After(startTimeout):
		return "", &StartError{fmt.Sprintf("svc-stub did not start within %s: %s", startTimeout, lastLine(logPath))}
	}
}

// lastLine is the last thing the stub logged: why it gave up, as it said it.
func lastLine(logPath string) string {
	text, err := os.ReadFile(logPath)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(text)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
