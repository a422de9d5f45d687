package resources

import "sync"

// revisions counts the changes of what one key names: an object, or the
// objects of one target of a reverse index. Each key has a cell, made on
// first use and kept, that holds the index's clock at the key's last
// change (0: never changed). A computation that records the cells it read
// and their values (see [Deps]) knows it would read the same again while
// they hold them. Like the Index, it may be read concurrently (lookups
// make cells, under mu) but not changed while it is read.
type revisions[K comparable] struct {
	clock *uint64
	mu    *sync.Mutex
	cells map[K]*uint64
	log   *changeLog
}

func newRevisions[K comparable](clock *uint64, log *changeLog) revisions[K] {
	return revisions[K]{clock: clock, mu: new(sync.Mutex), cells: map[K]*uint64{}, log: log}
}

// cell returns the revision cell of k.
func (r revisions[K]) cell(k K) *uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cells[k]
	if c == nil {
		c = new(uint64)
		r.cells[k] = c
	}
	return c
}

// bump records a change of k.
func (r revisions[K]) bump(k K) {
	*r.clock++
	c := r.cell(k)
	*c = *r.clock
	r.log.add(logEntry{clock: *r.clock, cell: c})
}

// changeLog lists the latest changes of the index, oldest first: each cell
// bumped, and each object put or removed, with the clock after it. It
// keeps at most maxLog entries; a reader that fell further behind is told
// so, and must look at everything again.
type changeLog struct {
	entries []logEntry
	// since is the clock before the oldest entry: the log holds every
	// change after it.
	since uint64
}

type logEntry struct {
	clock  uint64
	cell   *uint64   // a cell bumped, or nil
	object ObjectKey // an object put or removed, when cell is nil
}

// maxLog bounds the change log.
const maxLog = 1 << 16

func (l *changeLog) add(e logEntry) {
	if len(l.entries) >= maxLog {
		drop := len(l.entries) / 2
		l.since = l.entries[drop-1].clock
		l.entries = append(l.entries[:0], l.entries[drop:]...)
	}
	l.entries = append(l.entries, e)
}

// Changes is what changed in an index after a clock: the objects put or
// removed, and the cells (of objects and of sets of objects) bumped.
type Changes struct {
	Objects []ObjectKey
	cells   map[*uint64]bool
}

// Touches reports whether d recorded one of the cells that changed.
func (c *Changes) Touches(d *Deps) bool {
	for _, cell := range d.cells {
		if c.cells[cell] {
			return true
		}
	}
	return false
}

// Cells lists the cells that changed.
func (c *Changes) Cells() []*uint64 {
	out := make([]*uint64, 0, len(c.cells))
	for cell := range c.cells {
		out = append(out, cell)
	}
	return out
}

// ChangesSince returns what changed after clock since, and the clock now.
// It reports false when the log no longer reaches back that far.
func (x *Index) ChangesSince(since uint64) (*Changes, uint64, bool) {
	if since < x.log.since {
		return nil, *x.clock, false
	}
	out := &Changes{cells: map[*uint64]bool{}}
	es := x.log.entries
	i := len(es)
	for i > 0 && es[i-1].clock > since {
		i--
	}
	for _, e := range es[i:] {
		if e.cell != nil {
			out.cells[e.cell] = true
		} else {
			out.Objects = append(out.Objects, e.object)
		}
	}
	return out, *x.clock, true
}

// Clock is the index's clock: it goes up with every change.
func (x *Index) Clock() uint64 { return *x.clock }

// Deps is what a computation read of an [Index] through a [View]: the
// revision of every object and set of objects it looked up. The zero value
// is empty and ready to use. Deps are tied to the Index they were recorded
// on.
type Deps struct {
	cells []*uint64
	seen  []uint64
}

// add records cell at its current value.
func (d *Deps) add(cell *uint64) {
	if n := len(d.cells); n > 0 && d.cells[n-1] == cell {
		return // the same lookup twice in a row
	}
	d.cells = append(d.cells, cell)
	d.seen = append(d.seen, *cell)
}

// Unchanged reports whether everything recorded in d is as it was: the
// same lookups would give the same objects.
func (d *Deps) Unchanged() bool {
	for i, c := range d.cells {
		if *c != d.seen[i] {
			return false
		}
	}
	return true
}

// Cells lists the cells recorded, for an index of who read what.
func (d *Deps) Cells() []*uint64 { return d.cells }

// Len is the number of lookups recorded.
func (d *Deps) Len() int { return len(d.cells) }

// Reset empties d, keeping its storage.
func (d *Deps) Reset() {
	d.cells, d.seen = d.cells[:0], d.seen[:0]
}
