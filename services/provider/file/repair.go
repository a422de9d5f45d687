package file

import (
	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// The provider owns the keys it published: after load it keeps watching the
// resources bucket, and a change of one of its keys that it did not make (a
// value written by another writer, a value that does not decode, a deletion)
// makes the next sync write its own value again. Its own writes come back at
// the revision it recorded and are passed over; a foreign value equal to the
// provider's (same origin and content) is adopted, not written again.

// observe looks at one change of the bucket after load. It reports whether
// a sync must repair a key.
func (p *publisher) observe(e *bus.Entry) bool {
	if e == nil {
		return false
	}
	rec, ours := p.records[e.Key]
	if !ours || e.Revision <= rec.revision {
		return false
	}
	if e.Op == bus.OpDelete {
		p.log.Warn("resource deleted by another writer; writing it again", "key", e.Key)
	} else if res, ok := e.Value.(*busv1.Resource); ok && res.GetOrigin() == rec.origin {
		if got, err := recordOf(res); err == nil && got.content == rec.content {
			rec.revision = e.Revision
			p.records[e.Key] = rec
			return false
		}
		p.log.Warn("resource overwritten by another writer; writing it again", "key", e.Key)
	} else {
		p.log.Warn("resource overwritten by another writer; writing it again", "key", e.Key, "error", e.Err)
	}
	// The key keeps its generation; the zero content makes the sync write it.
	rec.content, rec.input, rec.revision = [32]byte{}, nil, e.Revision
	p.records[e.Key] = rec
	p.dirty[e.Key] = true
	return true
}
