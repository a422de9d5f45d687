package translator

import (
	"context"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/pkg/bus"
)

// output is a value to write under a key.
type output struct {
	key string
	msg proto.Message
}

// putMany writes outs as put would, but sends those whose key the ledger
// knows in one batch, each a compare-and-set on the revision the ledger
// expects, instead of waiting for each write: the statuses of a gateway of
// thousands of routes are thousands of keys. A write the batch could not
// make (its key changed meanwhile, or any error) is made again by put,
// which reads the key and says why. outs are the translation of the
// resources as of revision source.
func (s *Service) putMany(ctx context.Context, st *session, source uint64, b bus.Bucket, outs []output) error {
	if len(outs) < 2 {
		for _, o := range outs {
			if err := s.putEncoded(ctx, st, source, b, o.key, o.msg, fingerprintAndBytes); err != nil {
				return err
			}
		}
		return nil
	}
	bctx, cancel := context.WithTimeout(ctx, s.cfg.WriteTimeout)
	defer cancel()
	type sent struct {
		output
		fp    fingerprint
		large bool
	}
	batch := s.bus.Batch(b)
	var inBatch []sent
	var again []output
	for _, o := range outs {
		fp, data := fingerprintAndBytes(o.msg)
		st.sent[sentKey{b, o.key}] = sentValue{msg: o.msg, fp: fp}
		if st.ledger.unchanged(b, o.key, fp) {
			continue
		}
		expect, ok := st.ledger.expected(b, o.key, source)
		if !ok || data == nil {
			again = append(again, o)
			continue
		}
		batch.Put(bctx, o.key, o.msg, bus.WithSourceRevision(source), bus.WithRevision(expect),
			bus.WithMarshalled(data), bus.WithHeader(headerDigest, fp.String()), bus.WithHeader(headerWriter, s.id),
			bus.WithPublishedFrom(bctx))
		inBatch = append(inBatch, sent{o, fp, int64(len(data)) > s.bus.Conn().MaxPayload()/2})
	}
	_ = batch.Wait(bctx) // what failed is written again below
	for _, x := range inBatch {
		rev, ok := batch.Revisions[x.key]
		if !ok {
			again = append(again, x.output)
			continue
		}
		s.metrics.observeOutput(ctx, b, "put")
		st.ledger.wrote(b, x.key, x.fp, rev, source, x.large)
	}
	for _, o := range slices.Clip(again) {
		if err := s.putEncoded(ctx, st, source, b, o.key, o.msg, fingerprintAndBytes); err != nil {
			return err
		}
	}
	return nil
}
