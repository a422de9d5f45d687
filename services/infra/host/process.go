package host

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

const (
	// stopGrace is how long an Envoy has to exit after SIGTERM before it is
	// killed.
	stopGrace = 10 * time.Second
	// Restart backoff of an Envoy that exited on its own; it starts over once
	// an Envoy has run for restartReset.
	restartMin   = time.Second
	restartMax   = 30 * time.Second
	restartReset = time.Minute
)

// supervisor runs one Envoy per bootstrap file. Its methods are called from the
// Provisioner's goroutine; each Envoy is watched by a goroutine of its own.
type supervisor struct {
	envoy string
	out   io.Writer
	log   *slog.Logger

	procs   map[string]*process // by bootstrap path
	baseIDs map[int]bool        // in use
}

// process is one supervised Envoy, restarted until cancel is called.
type process struct {
	baseID int
	cancel context.CancelFunc
	done   chan struct{} // closed when the Envoy has exited for good
}

func newSupervisor(envoy string, out io.Writer, log *slog.Logger) *supervisor {
	return &supervisor{envoy: envoy, out: out, log: log, procs: map[string]*process{}, baseIDs: map[int]bool{}}
}

// ensure starts the Envoy of the bootstrap at path unless it runs; restart
// stops a running one first so that it reads a changed bootstrap.
func (s *supervisor) ensure(path string, args []string, restart bool) {
	if _, ok := s.procs[path]; ok {
		if !restart {
			return
		}
		s.stop(path)
	}
	id := s.freeBaseID()
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{baseID: id, cancel: cancel, done: make(chan struct{})}
	s.procs[path] = p
	s.baseIDs[id] = true
	args = append(args[:len(args):len(args)], "--base-id", strconv.Itoa(id))
	go s.run(ctx, p, path, args)
}

// freeBaseID is the lowest base id from 1 that no Envoy of s uses; 0, Envoy's
// default, is left to Envoys started by hand.
func (s *supervisor) freeBaseID() int {
	id := 1
	for s.baseIDs[id] {
		id++
	}
	return id
}

// stop stops the Envoy of the bootstrap at path and waits for it to exit.
func (s *supervisor) stop(path string) {
	p, ok := s.procs[path]
	if !ok {
		return
	}
	p.cancel()
	<-p.done
	delete(s.procs, path)
	delete(s.baseIDs, p.baseID)
}

// stopAll stops every Envoy, all at once, and waits for them.
func (s *supervisor) stopAll() {
	for _, p := range s.procs {
		p.cancel()
	}
	for path := range s.procs {
		s.stop(path)
	}
}

// run starts the Envoy again whenever it exits, with a backoff, until ctx is
// done.
func (s *supervisor) run(ctx context.Context, p *process, path string, args []string) {
	defer close(p.done)
	backoff := restartMin
	for {
		started := time.Now()
		err := s.runOnce(ctx, path, args)
		if ctx.Err() != nil {
			s.log.Info("envoy stopped", "path", path, "base_id", p.baseID)
			return
		}
		if time.Since(started) >= restartReset {
			backoff = restartMin
		}
		s.log.Error("envoy exited", "path", path, "base_id", p.baseID, "error", err, "restart_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, restartMax)
	}
}

// runOnce runs the Envoy until it exits; when ctx is done it is sent SIGTERM,
// and killed after stopGrace.
func (s *supervisor) runOnce(ctx context.Context, path string, args []string) error {
	cmd := exec.CommandContext(ctx, s.envoy, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	cmd.Stdout, cmd.Stderr = s.out, s.out
	cmd.SysProcAttr = sysProcAttr()
	// The parent-death signal follows the thread that started the child: keep
	// this goroutine on that thread until the child is gone.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return err
	}
	s.log.Info("envoy started", "path", path, "pid", cmd.Process.Pid, "args", args)
	return cmd.Wait()
}
