package resources

// revisions counts the changes of what one key names: an object, or the
// objects of one target of a reverse index. Each key has a cell, made on
// first use and kept, that holds the index's clock at the key's last
// change (0: never changed). A computation that records the cells it read
// and their values (see [Deps]) knows it would read the same again while
// they hold them. Not safe for concurrent use, like the Index.
type revisions[K comparable] struct {
	clock *uint64
	cells map[K]*uint64
}

func newRevisions[K comparable](clock *uint64) revisions[K] {
	return revisions[K]{clock: clock, cells: map[K]*uint64{}}
}

// cell returns the revision cell of k.
func (r revisions[K]) cell(k K) *uint64 {
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
	*r.cell(k) = *r.clock
}

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

// Len is the number of lookups recorded.
func (d *Deps) Len() int { return len(d.cells) }

// Reset empties d, keeping its storage.
func (d *Deps) Reset() {
	d.cells, d.seen = d.cells[:0], d.seen[:0]
}
