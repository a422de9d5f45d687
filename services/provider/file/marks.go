package file

import (
	"bytes"
	"time"

	"github.com/gatewire/gatewire/pkg/manifest"
)

// Deadlines of the file provider's SYNCING marks: how long the translator
// waits for the SYNCED mark of the first publication of the folder, and of
// a batch of changes, before it translates anyway.
const (
	initialSyncWithin = 2 * time.Minute
	batchSyncWithin   = 30 * time.Second
)

// pending counts the writes a sync of want over keys (nil: all) may make:
// the objects whose input or origin differs from what was published (an
// upper bound: an object rewritten with equal content counts), and the
// deletions.
func (p *publisher) pending(want map[string]manifest.Object, keys map[string]bool) int {
	n := 0
	for _, key := range p.candidates(want, keys) {
		o, wanted := want[key]
		prev, seen := p.records[key]
		if wanted && (!seen || !bytes.Equal(prev.input, o.JSON) || prev.origin != origin(o)) || !wanted && seen {
			n++
		}
	}
	return n
}
