package translator

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// The IR is for people and tools (gatewire status, tests), and the
// largest output: the xds, status and infra outputs are written at once,
// and the IRs once translations have paused for irDelay, or irMaxDelay
// after the first IR not written, whichever comes first, so that a burst
// of edits pays for one IR write, not one per edit. They are encoded off
// the follow loop (the first IR of 3,000 routes takes 30 ms), so that an
// edit that comes meanwhile is translated at once.
const (
	irDelay    = 250 * time.Millisecond
	irMaxDelay = 5 * time.Second
)

// pendingIR is an IR translated and not written yet, with the revision of
// the resources it was translated from.
type pendingIR struct {
	ir     *irv1.Gateway
	source uint64
}

// encodedIR is a pendingIR of gateway gw with its encoding and the
// encoding's fingerprint, or the error that kept it from being encoded.
type encodedIR struct {
	pendingIR
	gw   types.NamespacedName
	fp   fingerprint
	data []byte
	err  error
}

// irDue is when the IRs pending are written.
func irDue(st *session) time.Time {
	quiet, latest := st.irLast.Add(irDelay), st.irFirst.Add(irMaxDelay)
	if quiet.Before(latest) {
		return quiet
	}
	return latest
}

// encodeIRs takes the IRs pending and encodes them in a goroutine, which
// sends them on st.irsEncoded when it is done. The IRs are not changed
// once translated, and each gateway's encoder is used by one goroutine
// at a time: the next encodeIRs waits for writeIRs.
func (st *session) encodeIRs() {
	batch := make([]encodedIR, 0, len(st.irPending))
	encoders := make([]*irEncoder, 0, len(st.irPending))
	for gw, p := range st.irPending {
		enc := st.irEncoders[gw]
		if enc == nil {
			enc = &irEncoder{}
			st.irEncoders[gw] = enc
		}
		batch = append(batch, encodedIR{pendingIR: p, gw: gw})
		encoders = append(encoders, enc)
	}
	clear(st.irPending)
	done := make(chan []encodedIR, 1) // the goroutine never waits for a session that ended
	st.irsEncoded = done
	go func() {
		for i := range batch {
			batch[i].fp, batch[i].data, batch[i].err = encoders[i].encode(batch[i].ir)
		}
		done <- batch
	}()
}

// writeIRs writes the IRs encoded, but those of gateways translated again
// or gone since.
func (s *Service) writeIRs(ctx context.Context, st *session, batch []encodedIR) error {
	st.irsEncoded = nil
	for _, e := range batch {
		if _, newer := st.irPending[e.gw]; newer || st.last[e.gw] == nil || st.last[e.gw].IR != e.ir {
			continue
		}
		encode := func(proto.Message) (fingerprint, []byte) {
			if e.err != nil {
				return fingerprint{}, nil // unknown content: the write happens, encoded by the bus
			}
			return e.fp, e.data
		}
		if err := s.putEncoded(ctx, st, e.source, bus.IR, bus.GatewayKey(e.gw.Namespace, e.gw.Name), e.ir, encode); err != nil {
			return err
		}
	}
	return nil
}
