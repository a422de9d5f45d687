package testkit

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// childEnv names, in a child's environment, the test that is its body.
const childEnv = "GATEWIRE_TESTKIT_CHILD"

// childStop is how long a child may take to end once its standard input
// closes, before it is killed.
const childStop = 10 * time.Second

// ChildOptions say how StartChild runs a child process.
type ChildOptions struct {
	// Test is the name of the test function that is the child's body; it
	// must call InChild first and return at once when that is false.
	Test string
	// XDSBootstrap, when set, is the gRPC xDS bootstrap (JSON) of the
	// child, in GRPC_XDS_BOOTSTRAP_CONFIG; the parent's GRPC_XDS_BOOTSTRAP*
	// variables are never passed on.
	XDSBootstrap []byte
	// Env are more KEY=value variables for the child.
	Env []string
	// Stdout makes the child's standard output a pipe read through
	// Child.Stdout; without it the output goes to Child.Logs with the
	// standard error. A caller that sets it must read what the child writes.
	Stdout bool
}

// Child is a child process started by StartChild.
type Child struct {
	// Stdin is the child's standard input; closing it asks the child to end.
	Stdin io.WriteCloser
	// Stdout scans the child's standard output when ChildOptions.Stdout is
	// set, and is nil otherwise.
	Stdout *bufio.Scanner
	// Logs holds the child's standard error (and standard output, unless
	// ChildOptions.Stdout is set).
	Logs *LogBuffer
	cmd  *exec.Cmd
}

// InChild reports whether this process is a child started by StartChild
// to run test.
func InChild(test string) bool { return os.Getenv(childEnv) == test }

// StartChild runs the test binary again with only opts.Test selected, as a
// child process, until the test ends: then it closes the child's standard
// input and waits for it (killing it after 10s). The child's logs are
// shown when it fails or the test fails. It is how gatewire's tests run
// gRPC-Go's xDS client as a proxyless node: gRPC reads its bootstrap when
// its packages load, so each bootstrap needs its own process.
func StartChild(t testing.TB, opts ChildOptions) *Child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+opts.Test+"$", "-test.count=1")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GRPC_XDS_BOOTSTRAP") && !strings.HasPrefix(kv, childEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, childEnv+"="+opts.Test)
	if opts.XDSBootstrap != nil {
		cmd.Env = append(cmd.Env, "GRPC_XDS_BOOTSTRAP_CONFIG="+string(opts.XDSBootstrap))
	}
	cmd.Env = append(cmd.Env, opts.Env...)
	c := &Child{Logs: &LogBuffer{}, cmd: cmd}
	cmd.Stderr = c.Logs
	var err error
	if c.Stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if opts.Stdout {
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		c.Stdout = bufio.NewScanner(stdout)
	} else {
		cmd.Stdout = c.Logs
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the child process %s: %v", opts.Test, err)
	}
	t.Cleanup(func() { c.stop(t, opts.Test) })
	return c
}

func (c *Child) stop(t testing.TB, name string) {
	_ = c.Stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(childStop):
		_ = c.cmd.Process.Kill()
		err = fmt.Errorf("killed after %s: %w", childStop, <-done)
	}
	if err != nil || t.Failed() {
		t.Logf("child process %s (exit: %v):\n%s", name, err, c.Logs.String())
	}
}
