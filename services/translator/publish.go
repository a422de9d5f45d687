package translator

import (
	"context"
	"errors"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/services/translator/gatewayapi"
)

// translateGateway brings the outputs of one gateway up to date with as
// much work as w calls for, and writes them, or removes them when the
// gateway has none.
func (s *Service) translateGateway(ctx context.Context, st *session, gw types.NamespacedName, w work) (err error) {
	ctx, span := s.tracer.Start(ctx, "translate gateway", trace.WithAttributes(
		attribute.String("gatewire.gateway", gw.String()),
		attribute.Int64("gatewire.source_revision", int64(st.revision)),
	))
	defer func() {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}()
	start := time.Now()
	out, how := s.retranslate(st, gw, w)
	span.SetAttributes(attribute.String("gatewire.work", how))
	observeTranslation(ctx, gw, how, time.Since(start))
	if out == nil {
		delete(st.last, gw)
		return s.removeGateway(ctx, st, gw)
	}
	st.last[gw] = out
	if out.XDSError != nil {
		s.log.Warn("gateway configuration is not valid, keeping its previous xds snapshot", "gateway", gw, "err", out.XDSError)
		span.SetAttributes(attribute.String("gatewire.xds_error", out.XDSError.Error()))
	}
	if err := s.writeGateway(ctx, st, out); err != nil {
		return err
	}
	attrs := []any{"gateway", gw, "revision", st.revision, "work", how, "duration", time.Since(start)}
	if out.XDS != nil {
		attrs = append(attrs, "version", out.XDS.GetVersion())
		span.SetAttributes(attribute.String("gatewire.xds_version", out.XDS.GetVersion()))
	}
	s.log.Debug("gateway translated", attrs...)
	return nil
}

// retranslate returns the gateway's translation now, reusing the last one
// when w allows, and says how it got it.
func (s *Service) retranslate(st *session, gw types.NamespacedName, w work) (*Output, string) {
	last := st.last[gw]
	switch {
	case last != nil && w == workRewrite:
		return last, "rewrite"
	case last != nil && w == workEndpoints:
		if out, ok := updateEndpoints(st.idx, last); ok {
			return out, "endpoints"
		}
	}
	return Translate(st.idx, gw), "full"
}

func (s *Service) writeGateway(ctx context.Context, st *session, out *Output) error {
	key := bus.GatewayKey(out.Gateway.Namespace, out.Gateway.Name)
	if err := s.put(ctx, st, bus.IR, key, out.IR); err != nil {
		return err
	}
	if out.XDS != nil {
		if err := s.put(ctx, st, bus.XDS, key, out.XDS); err != nil {
			return err
		}
	}
	if err := s.put(ctx, st, bus.Infra, key, out.Proxy); err != nil {
		return err
	}
	keep := map[string]struct{}{}
	for _, status := range out.Statuses {
		k := statusKey(status, out.Gateway)
		keep[k] = struct{}{}
		if err := s.put(ctx, st, bus.Status, k, status); err != nil {
			return err
		}
	}
	return s.deleteStatuses(ctx, st, out.Gateway, keep)
}

// removeGateway deletes every output of a gateway that has none any more.
func (s *Service) removeGateway(ctx context.Context, st *session, gw types.NamespacedName) error {
	key := bus.GatewayKey(gw.Namespace, gw.Name)
	for _, b := range []bus.Bucket{bus.XDS, bus.Infra, bus.IR} {
		if err := s.delete(ctx, st, b, key); err != nil {
			return err
		}
	}
	if err := s.deleteStatuses(ctx, st, gw, nil); err != nil {
		return err
	}
	s.log.Debug("gateway outputs removed", "gateway", gw, "revision", st.revision)
	return nil
}

// deleteStatuses deletes the status keys written for gw that are not in keep.
func (s *Service) deleteStatuses(ctx context.Context, st *session, gw types.NamespacedName, keep map[string]struct{}) error {
	var stale []string
	for k := range st.ledger.statusKeys[gw] {
		if _, ok := keep[k]; !ok {
			stale = append(stale, k)
		}
	}
	for _, k := range stale {
		if err := s.delete(ctx, st, bus.Status, k); err != nil {
			return err
		}
	}
	return nil
}

// translateClass writes the status of a GatewayClass, or deletes it when the
// class is gone or not gatewire's.
func (s *Service) translateClass(ctx context.Context, st *session, name string) error {
	key := ClassStatusKey(name)
	status := gatewayapi.TranslateClass(st.idx, name)
	if status == nil {
		return s.delete(ctx, st, bus.Status, key)
	}
	return s.put(ctx, st, bus.Status, key, status)
}

// put writes msg under key unless the bucket is known to hold the same
// value. A write refused because the stored value is newer is not an error.
func (s *Service) put(ctx context.Context, st *session, b bus.Bucket, key string, msg proto.Message) error {
	fp := fingerprintOf(msg)
	if st.ledger.unchanged(b, key, fp) {
		return nil
	}
	stamp(msg, st.revision)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.WriteTimeout)
	defer cancel()
	opts := []bus.PutOption{bus.WithSourceRevision(st.revision),
		bus.WithHeader(headerDigest, fp.String()), bus.WithHeader(headerWriter, s.id), bus.WithPublishedFrom(ctx)}
	rev, err := uint64(0), bus.ErrConflict
	if expect, ok := st.ledger.expected(b, key, st.revision); ok {
		rev, err = s.bus.Put(ctx, b, key, msg, append(slices.Clip(opts), bus.WithRevision(expect))...)
	}
	if errors.Is(err, bus.ErrConflict) {
		rev, err = s.bus.Put(ctx, b, key, msg, opts...)
	}
	switch {
	case errors.Is(err, bus.ErrStale):
		s.log.Debug("output is newer on the bus, not overwriting it", "bucket", b, "key", key, "revision", st.revision)
		st.ledger.unknown(b, key)
		return nil
	case err != nil:
		return err
	}
	observeOutput(ctx, b, "put")
	large := int64(proto.Size(msg)) > s.bus.Conn().MaxPayload()/2
	st.ledger.wrote(b, key, fp, rev, st.revision, large)
	return nil
}

// delete removes key from b when the bucket is known to hold it.
func (s *Service) delete(ctx context.Context, st *session, b bus.Bucket, key string) error {
	if !st.ledger.has(b, key) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.WriteTimeout)
	defer cancel()
	err := s.bus.Delete(ctx, b, key, bus.WithSourceRevision(st.revision), bus.WithHeader(headerWriter, s.id))
	switch {
	case errors.Is(err, bus.ErrStale):
		s.log.Debug("output is newer on the bus, not deleting it", "bucket", b, "key", key, "revision", st.revision)
		st.ledger.unknown(b, key)
		return nil
	case err != nil:
		return err
	}
	observeOutput(ctx, b, "delete")
	st.ledger.deleted(b, key)
	return nil
}
