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
	s.metrics.observeTranslation(ctx, gw, how, time.Since(start))
	if out == nil {
		delete(st.last, gw)
		delete(st.irPending, gw)
		delete(st.irEncoders, gw)
		return s.removeGateway(ctx, st, gw)
	}
	out = st.withBadValues(out)
	st.last[gw] = out
	if out.XDSError != nil {
		s.log.Warn("gateway configuration is not valid, keeping its previous xds snapshot", "gateway", gw, "error", out.XDSError)
		span.SetAttributes(attribute.String("gatewire.xds_error", out.XDSError.Error()))
	}
	if err := s.writeGateway(ctx, st, out, w == workRewrite); err != nil {
		return err
	}
	attrs := []any{"gateway", gw, "revision", st.revision, "work", how, "routes_translated", out.RoutesBuilt, "duration", time.Since(start)}
	if out.Build != nil {
		attrs = append(attrs, "version", out.Build.Commit.GetVersion(), "xds_changed", len(out.Build.Changed), "xds_removed", len(out.Build.Removed))
		span.SetAttributes(attribute.String("gatewire.xds_version", out.Build.Commit.GetVersion()))
	}
	s.log.Debug("gateway translated", attrs...)
	return nil
}

// retranslate returns the gateway's translation now, reusing the last one
// when w allows, and says how it got it. A translation reuses what did
// not change since the last one (see translator).
func (s *Service) retranslate(st *session, gw types.NamespacedName, w work) (*Output, string) {
	if last := st.last[gw]; last != nil && w == workRewrite {
		return last, "rewrite"
	}
	return st.tr.translate(gw), "translate"
}

// writeGateway writes a gateway's outputs: its xDS first, then its proxy at
// once; its statuses as soon as no input waits (see queueStatuses) and its
// IR a little later (see writeIRs). With all, every key of its xDS and
// every status is checked against the ledger, not only those that changed
// since the last translation (a foreign write to repair).
func (s *Service) writeGateway(ctx context.Context, st *session, out *Output, all bool) error {
	key := bus.GatewayKey(out.Gateway.Namespace, out.Gateway.Name)
	if out.Build != nil {
		if err := s.writeXDS(ctx, st, out.Gateway, out.Build, all); err != nil {
			return err
		}
	}
	if len(st.irPending) == 0 {
		st.irFirst = time.Now()
	}
	st.irPending[out.Gateway], st.irLast = pendingIR{out.IR, st.revision}, time.Now()
	if err := s.put(ctx, st, bus.Infra, key, out.Proxy); err != nil {
		return err
	}
	st.queueStatuses(out, all)
	return nil
}

// removeGateway deletes every output of a gateway that has none any more,
// but for the statuses of the ListenerSets that name it when it does not
// exist (see gatewayapi.OrphanListenerSetStatuses), which it writes.
func (s *Service) removeGateway(ctx context.Context, st *session, gw types.NamespacedName) error {
	st.tr.forget(gw)
	delete(st.built, gw)
	delete(st.statuses, gw)
	delete(st.statusJobs, gw)
	if err := s.removeXDS(ctx, st, gw); err != nil {
		return err
	}
	key := bus.GatewayKey(gw.Namespace, gw.Name)
	for _, b := range []bus.Bucket{bus.Infra, bus.IR} {
		if err := s.delete(ctx, st, b, key); err != nil {
			return err
		}
	}
	keep := map[string]struct{}{}
	for _, status := range gatewayapi.OrphanListenerSetStatuses(st.idx, gw) {
		k := statusKey(status, gw)
		keep[k] = struct{}{}
		delete(st.foreign, sentKey{bus.Status, k})
		if err := s.put(ctx, st, bus.Status, k, status); err != nil {
			return err
		}
	}
	if err := s.deleteStatuses(ctx, st, st.revision, gw, keep); err != nil {
		return err
	}
	s.log.Debug("gateway outputs removed", "gateway", gw, "revision", st.revision, "orphan_listenersets", len(keep))
	return nil
}

// deleteStatuses deletes the status keys written for gw that are not in
// keep, for a translation of the resources as of revision source.
func (s *Service) deleteStatuses(ctx context.Context, st *session, source uint64, gw types.NamespacedName, keep map[string]struct{}) error {
	var stale []string
	for k := range st.ledger.statusKeys[gw] {
		// keep nil: the gateway is gone, with every status it gave.
		if _, ok := keep[k]; !ok && (keep == nil || !st.keepsStatus(k)) {
			stale = append(stale, k)
		}
	}
	for _, k := range stale {
		if err := s.deleteAt(ctx, st, source, bus.Status, k); err != nil {
			return err
		}
	}
	return nil
}

// translateClass writes the status of a GatewayClass, or deletes it when the
// class is gone or not gatewire's.
func (s *Service) translateClass(ctx context.Context, st *session, name string) error {
	key := ClassStatusKey(name)
	status := gatewayapi.TranslateClass(st.idx, s.cfg.Controller(), name)
	if status == nil {
		return s.delete(ctx, st, bus.Status, key)
	}
	return s.put(ctx, st, bus.Status, key, status)
}

// put writes msg under key unless the bucket is known to hold the same
// value. A write refused because the stored value is newer is not an error.
func (s *Service) put(ctx context.Context, st *session, b bus.Bucket, key string, msg proto.Message) error {
	return s.putEncoded(ctx, st, st.revision, b, key, msg, fingerprintAndBytes)
}

// putEncoded is put with the function that hashes and encodes msg, for a
// translation of the resources as of revision source.
func (s *Service) putEncoded(ctx context.Context, st *session, source uint64, b bus.Bucket, key string, msg proto.Message, encode func(proto.Message) (fingerprint, []byte)) error {
	// A value the session wrote before (a reused route status) need not
	// be hashed again.
	sent, ok := st.sent[sentKey{b, key}]
	fp := sent.fp
	var data []byte // msg's encoding, when hashing it gave it
	if !ok || sent.msg != msg {
		fp, data = encode(msg)
	}
	st.sent[sentKey{b, key}] = sentValue{msg: msg, fp: fp}
	if st.ledger.unchanged(b, key, fp) {
		return nil
	}
	stamp(msg, source)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.WriteTimeout)
	defer cancel()
	opts := []bus.PutOption{bus.WithSourceRevision(source), bus.WithMarshalled(data),
		bus.WithHeader(headerDigest, fp.String()), bus.WithHeader(headerWriter, s.id), bus.WithPublishedFrom(ctx)}
	rev, err := uint64(0), bus.ErrConflict
	if expect, ok := st.ledger.expected(b, key, source); ok {
		rev, err = s.bus.Put(ctx, b, key, msg, append(slices.Clip(opts), bus.WithRevision(expect))...)
	}
	if errors.Is(err, bus.ErrConflict) {
		rev, err = s.bus.Put(ctx, b, key, msg, opts...)
	}
	switch {
	case errors.Is(err, bus.ErrStale):
		s.log.Debug("output is newer on the bus, not overwriting it", "bucket", b, "key", key, "revision", source)
		st.ledger.unknown(b, key)
		return nil
	case err != nil:
		return err
	}
	s.metrics.observeOutput(ctx, b, "put")
	size := len(data)
	if data == nil {
		size = proto.Size(msg)
	}
	large := int64(size) > s.bus.Conn().MaxPayload()/2
	st.ledger.wrote(b, key, fp, rev, source, large)
	return nil
}

// delete removes key from b when the bucket is known to hold it.
func (s *Service) delete(ctx context.Context, st *session, b bus.Bucket, key string) error {
	return s.deleteAt(ctx, st, st.revision, b, key)
}

// deleteAt is delete for a translation of the resources as of revision
// source.
func (s *Service) deleteAt(ctx context.Context, st *session, source uint64, b bus.Bucket, key string) error {
	if !st.ledger.has(b, key) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.WriteTimeout)
	defer cancel()
	err := s.bus.Delete(ctx, b, key, bus.WithSourceRevision(source), bus.WithHeader(headerWriter, s.id))
	switch {
	case errors.Is(err, bus.ErrStale):
		s.log.Debug("output is newer on the bus, not deleting it", "bucket", b, "key", key, "revision", source)
		st.ledger.unknown(b, key)
		return nil
	case err != nil:
		return err
	}
	s.metrics.observeOutput(ctx, b, "delete")
	st.ledger.deleted(b, key)
	delete(st.sent, sentKey{b, key})
	return nil
}

// sentKey names a key of a bucket; sentValue is the value the session last
// wrote there (or found there), with its fingerprint.
type sentKey struct {
	bucket bus.Bucket
	key    string
}

type sentValue struct {
	msg proto.Message
	fp  fingerprint
}
