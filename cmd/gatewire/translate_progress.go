package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// progressEvery is how often startProgress prints.
var progressEvery = 2 * time.Second

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// startProgress prints, when on, "read N of M files" on w every
// progressEvery until the returned function is called, which waits for the
// printer to end.
func startProgress(on bool, w io.Writer, done, total *atomic.Int64) (stop func()) {
	if !on {
		return func() {}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() {
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				fmt.Fprintf(w, "gatewire translate: read and validated %d of %d files in %s\n",
					done.Load(), total.Load(), time.Since(start).Round(time.Second))
			}
		}
	})
	return func() {
		close(quit)
		wg.Wait()
	}
}
