package xdsgen

import (
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// diffBackends brings the backends' pieces up to date. Both lists are
// sorted by name and an unchanged backend is the same pointer, so the common
// head and tail are kept as they are and only the window between them is
// walked by name: an edit costs what it changes, not a comparison of every
// name. A Build that fails after it resets the Builder, so the pieces may
// change in place.
func (b *Builder) diffBackends(backends []*irv1.Backend, d *delta) error {
	old := b.backends
	head := 0
	for head < len(old) && head < len(backends) && old[head] == backends[head] {
		head++
	}
	if head == len(old) && head == len(backends) {
		return nil
	}
	tail := 0
	for tail < len(old)-head && tail < len(backends)-head && old[len(old)-1-tail] == backends[len(backends)-1-tail] {
		tail++
	}
	mid, err := mergeBackends(old[head:len(old)-tail], b.bpieces[head:len(old)-tail], backends[head:len(backends)-tail], d)
	if err != nil {
		return err
	}
	if len(old) == len(backends) { // the usual edit: the pieces change in place
		copy(b.bpieces[head:], mid)
		b.backends = backends
		return nil
	}
	pieces := make([][2]*piece, 0, len(backends))
	pieces = append(pieces, b.bpieces[:head]...)
	pieces = append(pieces, mid...)
	pieces = append(pieces, b.bpieces[len(old)-tail:]...)
	b.backends, b.bpieces = backends, pieces
	return nil
}

// mergeBackends walks the old backends (with their pieces) and the new
// ones, both sorted by name, side by side: it keeps the pieces of a backend
// that is the same pointer or encodes to the same bytes, encodes the rest,
// and records in d what goes and what comes. It returns the new backends'
// pieces.
func mergeBackends(old []*irv1.Backend, oldPieces [][2]*piece, backends []*irv1.Backend, d *delta) ([][2]*piece, error) {
	pieces := make([][2]*piece, len(backends))
	i := 0
	for j, be := range backends {
		for i < len(old) && old[i].GetName() < be.GetName() {
			d.swap(oldPieces[i][0], nil)
			d.swap(oldPieces[i][1], nil)
			i++
		}
		same := i < len(old) && old[i].GetName() == be.GetName()
		if same && old[i] == be {
			pieces[j] = oldPieces[i]
		} else {
			ps, err := encodeBackend(be)
			if err != nil {
				return nil, err
			}
			var was [2]*piece
			if same {
				was = oldPieces[i]
			}
			for k := range ps {
				if was[k] != nil && was[k].res.GetVersion() == ps[k].res.GetVersion() {
					ps[k] = was[k] // the same bytes: keep the piece
				}
				d.swap(was[k], ps[k])
			}
			pieces[j] = ps
		}
		if same {
			i++
		}
	}
	for ; i < len(old); i++ {
		d.swap(oldPieces[i][0], nil)
		d.swap(oldPieces[i][1], nil)
	}
	return pieces, nil
}
