//go:build !linux

package file

// completions is Linux's report of completed writes (complete_linux.go).
// Elsewhere there is none: every write is read once the folder has been
// quiet for settleDelay.
type completions struct{}

func newCompletions() (*completions, error) { return nil, nil }

func (c *completions) Names() <-chan string { return nil }

func (c *completions) add(string) error { return nil }

func (c *completions) close() error { return nil }
