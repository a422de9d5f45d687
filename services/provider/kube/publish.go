package kube

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/manifest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// Origin is the origin of every Resource the Kubernetes mode publishes.
const Origin = "kubernetes"

// opTimeout bounds one bus operation.
const opTimeout = 10 * time.Second

// tracerName is the tracer of the Kubernetes mode's spans.
const tracerName = "github.com/gatewire/gatewire/services/provider/kube"

// stripes is the number of key locks; see publisher.lock.
const stripes = 64

// publisher keeps the resources bucket equal to what the cluster holds. It
// is safe for concurrent use.
type publisher struct {
	bus    *bus.Bus
	log    *slog.Logger
	tracer trace.Tracer

	// locks serialize the read-then-publish of one key (by hash): a reader
	// that read an older state cannot publish it after a newer one.
	locks [stripes]sync.Mutex

	mu sync.Mutex
	// published holds, for every key of origin "kubernetes" in the bucket,
	// the hash of its content (see contentHash).
	published map[string][32]byte
}

func newPublisher(b *bus.Bus, log *slog.Logger, tracer trace.Tracer) *publisher {
	return &publisher{bus: b, log: log, tracer: tracer}
}

// lock locks key's stripe and returns the unlock.
func (p *publisher) lock(key string) (unlock func()) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	m := &p.locks[h.Sum32()%stripes]
	m.Lock()
	return m.Unlock
}

// load reads the keys of origin "kubernetes" in the bucket and their
// content, so that a resync rewrites nothing that did not change and
// deletes what is gone.
func (p *publisher) load(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	w, err := p.bus.Watch(ctx, bus.Resources, ">")
	if err != nil {
		return fmt.Errorf("read %s: %w", p.bus.BucketName(bus.Resources), err)
	}
	defer w.Stop()
	published := map[string][32]byte{}
	for e := range w.Updates() {
		if e == nil {
			p.mu.Lock()
			p.published = published
			p.mu.Unlock()
			return nil
		}
		res, ok := e.Value.(*busv1.Resource)
		if e.Op != bus.OpPut || !ok || res.GetOrigin() != Origin {
			delete(published, e.Key)
			continue
		}
		h, err := contentHash(res.GetObject())
		if err != nil {
			p.log.Warn("unreadable resource replaced", "key", e.Key, "error", err)
		}
		published[e.Key] = h
	}
	return fmt.Errorf("read %s: %w", p.bus.BucketName(bus.Resources), context.Cause(ctx))
}

// keys returns the keys published.
func (p *publisher) keys() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.published))
	for k := range p.published {
		out = append(out, k)
	}
	return out
}

// has reports whether key is published.
func (p *publisher) has(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.published[key]
	return ok
}

// apply publishes obj of kind k under key, or deletes key when obj is nil.
// It writes only when the content changed. The caller holds key's lock.
func (p *publisher) apply(ctx context.Context, k kind, key string, obj client.Object) error {
	p.mu.Lock()
	prev, had := p.published[key]
	p.mu.Unlock()
	if obj == nil {
		if !had {
			return nil
		}
		ctx, done := p.span(ctx, key, "delete")
		err := p.bus.Delete(ctx, bus.Resources, key)
		done(err)
		if err != nil {
			return fmt.Errorf("delete %s: %w", key, err)
		}
		p.log.Debug("resource deleted", "key", key)
		p.set(key, nil)
		return nil
	}
	res, h, err := resource(k, obj)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if had && h == prev {
		return nil
	}
	ctx, done := p.span(ctx, key, "put")
	_, err = p.bus.Put(ctx, bus.Resources, key, res, bus.WithPublished(time.Now()))
	done(err)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	p.log.Debug("resource published", "key", key, "resource_version", res.ResourceVersion, "generation", res.Generation)
	p.set(key, &h)
	return nil
}

// span starts the span of one write, which the bus carries in the
// message's headers to the translator and beyond, and bounds it with
// opTimeout; done ends both.
func (p *publisher) span(ctx context.Context, key, op string) (context.Context, func(error)) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	ctx, span := p.tracer.Start(ctx, "provider.kubernetes.publish", trace.WithAttributes(
		attribute.String("gatewire.key", key), attribute.String("gatewire.op", op)))
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, op+" failed")
		}
		span.End()
		cancel()
	}
}

func (p *publisher) set(key string, h *[32]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h == nil {
		delete(p.published, key)
		return
	}
	p.published[key] = *h
}

// resource returns the Resource of obj and the hash of its content.
func resource(k kind, obj client.Object) (*busv1.Resource, [32]byte, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, [32]byte{}, err
	}
	m, err := decodeObject(data)
	if err != nil {
		return nil, [32]byte{}, err
	}
	// Typed objects from a cache carry no apiVersion and kind.
	m["apiVersion"], m["kind"] = k.gvk.GroupVersion().String(), k.name
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "managedFields")
	}
	out, err := manifest.EncodeJSON(m) // map keys sorted: the same object gives the same bytes
	if err != nil {
		return nil, [32]byte{}, err
	}
	h, err := contentHash(out)
	return &busv1.Resource{
		Group: k.gvk.Group, Version: k.gvk.Version, Kind: k.name,
		Namespace: obj.GetNamespace(), Name: obj.GetName(), Uid: string(obj.GetUID()),
		Generation: obj.GetGeneration(), ResourceVersion: obj.GetResourceVersion(),
		Object: out, Origin: Origin,
	}, h, err
}

// contentHash hashes object JSON without metadata.resourceVersion, which
// changes with every write, status writes included: an object whose content
// did not change is not published again.
func contentHash(object []byte) ([32]byte, error) {
	m, err := decodeObject(object)
	if err != nil {
		return [32]byte{}, err
	}
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "resourceVersion")
	}
	out, err := manifest.EncodeJSON(m)
	return sha256.Sum256(out), err
}

// keyKind returns the kind name of a resources bucket key.
func keyKind(key string) string {
	kind, _, _ := strings.Cut(key, ".")
	return kind
}

// decodeObject decodes object JSON keeping numbers as they were written.
func decodeObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("object JSON: %w", err)
	}
	return m, nil
}
