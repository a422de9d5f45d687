package file

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/manifest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// OriginPrefix starts the origin of every Resource the file provider
// publishes: "file:<path>:<line>".
const OriginPrefix = "file:"

// opTimeout bounds one bus operation.
const opTimeout = 10 * time.Second

// record is what the provider knows of what it last published under one
// key; not the Resource itself, whose object it does not need again.
type record struct {
	// origin and generation are the Resource's.
	origin     string
	generation int64
	// content is the hash of the object without generation and
	// resourceVersion, the two fields the provider computes.
	content [32]byte
	// spec is the hash of the object without metadata: when it changes, the
	// generation goes up.
	spec [32]byte
	// input is the object as the folder last gave it, nil until then: the
	// same input from the same origin is not hashed again.
	input []byte
	// revision is the KV revision of the value the provider knows the key
	// holds: its own last write, or the value it read on load. A change of
	// the key at a later revision is someone else's (see repair.go).
	revision uint64
}

// publisher keeps the resources bucket equal to the folder. It is owned by
// the Run goroutine.
type publisher struct {
	bus *bus.Bus
	log *slog.Logger
	// records holds the keys of the bucket whose origin is a file, and what
	// they hold; nil until load.
	records map[string]record
	// watch follows the bucket from load on, so that writes of others to
	// the provider's keys are repaired (see repair.go); nil until load.
	watch *bus.Watcher
	// dirty are keys the next sync looks at whatever changed: keys to
	// repair, and deletions held.
	dirty map[string]bool
}

// load reads the file objects of the resources bucket, so that the first sync
// deletes what the folder no longer holds, keeps the generation of objects
// that did not change, and writes nothing for them.
func (p *publisher) load(ctx context.Context) error {
	p.stop()
	w, err := p.bus.Watch(ctx, bus.Resources, ">")
	if err != nil {
		return err
	}
	timeout := time.NewTimer(opTimeout)
	defer timeout.Stop()
	records := map[string]record{}
	for {
		select {
		case e, ok := <-w.Updates():
			switch {
			case !ok:
				w.Stop()
				return fmt.Errorf("reading %s: %w", p.bus.BucketName(bus.Resources), context.Cause(ctx))
			case e == nil: // initial values done; the watch goes on for repairs
				p.records, p.watch, p.dirty = records, w, map[string]bool{}
				return nil
			}
			p.loaded(records, e)
		case <-timeout.C:
			w.Stop()
			return fmt.Errorf("reading %s: timed out after %s", p.bus.BucketName(bus.Resources), opTimeout)
		}
	}
}

// loaded records one entry of the initial read of the bucket.
func (p *publisher) loaded(records map[string]record, e *bus.Entry) {
	res, ok := e.Value.(*busv1.Resource)
	if e.Op != bus.OpPut || (ok && !strings.HasPrefix(res.GetOrigin(), OriginPrefix)) || strings.HasPrefix(e.Key, bus.SyncKind+".") {
		// not a file object; sync marks are no objects at all
		delete(records, e.Key)
		return
	}
	if !ok { // does not decode: if it is a file object, the sync replaces it
		records[e.Key] = record{revision: e.Revision}
		p.log.Warn("unreadable resource replaced", "key", e.Key, "error", e.Err)
		return
	}
	rec, err := recordOf(res)
	if err != nil {
		p.log.Warn("unreadable resource replaced", "key", e.Key, "error", err)
		rec = record{origin: res.GetOrigin(), generation: res.GetGeneration()}
	}
	rec.revision = e.Revision
	records[e.Key] = rec
}

// stop ends the watch of the bucket, if any; the next sync loads again.
func (p *publisher) stop() {
	if p.watch != nil {
		p.watch.Stop()
	}
	p.watch, p.records, p.dirty = nil, nil, nil
}

// sync puts every object of want that differs from what was published and
// deletes the file objects that are no longer wanted, except those that hold
// keeps (a file caught mid-write, see folder.holds). It looks at the keys
// of keys only, with those a repair or a held deletion left (see dirty),
// or at every key when keys is nil. Puts go out in one batch. It stops at
// the first bus error; what was done is remembered, so calling it again
// with every key finishes the job. It returns the number of keys whose
// deletion is held.
func (p *publisher) sync(ctx context.Context, want map[string]manifest.Object, keys map[string]bool, holds func(path string) bool) (puts, deletes, held int, err error) {
	candidates := p.candidates(want, keys)
	clear(p.dirty)
	puts, err = p.put(ctx, want, candidates)
	if err != nil {
		return puts, deletes, held, err
	}
	for _, key := range candidates {
		_, wanted := want[key]
		if _, published := p.records[key]; wanted || !published {
			continue
		}
		if holds(originPath(p.records[key].origin)) {
			p.dirty[key] = true
			held++
			continue
		}
		opCtx, cancel := context.WithTimeout(ctx, opTimeout)
		err := p.bus.Delete(opCtx, bus.Resources, key)
		cancel()
		if err != nil {
			return puts, deletes, held, fmt.Errorf("delete %s: %w", key, err)
		}
		p.log.Debug("resource deleted", "key", key)
		delete(p.records, key)
		deletes++
	}
	return puts, deletes, held, nil
}

// put writes, in one batch, the objects of want under keys that differ from
// what was published.
func (p *publisher) put(ctx context.Context, want map[string]manifest.Object, keys []string) (puts int, err error) {
	batch := p.bus.Batch(bus.Resources)
	written := map[string]record{}
	for _, key := range keys {
		o, ok := want[key]
		if !ok {
			continue
		}
		prev, seen := p.records[key]
		if seen && bytes.Equal(prev.input, o.JSON) && prev.origin == origin(o) {
			continue
		}
		res, rec, err := next(o, prev, seen)
		if err != nil {
			return puts, fmt.Errorf("%s: %w", key, err)
		}
		rec.input = o.JSON
		if seen && rec.content == prev.content && rec.origin == prev.origin {
			prev.input = o.JSON
			p.records[key] = prev
			continue
		}
		batch.Put(ctx, key, res, bus.WithPublished(time.Now()))
		written[key] = rec
	}
	opCtx, cancel := context.WithTimeout(ctx, opTimeout)
	err = batch.Wait(opCtx)
	cancel()
	for key, rec := range written {
		if rev, ok := batch.Revisions[key]; ok {
			rec.revision = rev
			p.records[key] = rec
			puts++
		}
	}
	if err != nil {
		return puts, fmt.Errorf("put: %w", err)
	}
	return puts, nil
}

// candidates returns, sorted, the keys a sync looks at: those of keys and
// dirty, or every key wanted or published when keys is nil.
func (p *publisher) candidates(want map[string]manifest.Object, keys map[string]bool) []string {
	if keys == nil {
		all := make(map[string]bool, len(want)+len(p.records))
		for key := range want {
			all[key] = true
		}
		for key := range p.records {
			all[key] = true
		}
		return sortedKeys(all)
	}
	some := maps.Clone(keys)
	for key := range p.dirty {
		some[key] = true
	}
	return sortedKeys(some)
}

// originPath is the path of an origin "file:<path>:<line>"; "" for another
// origin.
func originPath(origin string) string {
	rest, ok := strings.CutPrefix(origin, OriginPrefix)
	if !ok {
		return ""
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		return rest[:i]
	}
	return rest
}

// next returns the Resource to publish for o and its record, given what was
// published before (prev, when seen). The generation starts at 1 and goes up by one whenever
// the object outside metadata changes; it is read back from the bucket on
// start, so it survives restarts.
func next(o manifest.Object, prev record, seen bool) (*busv1.Resource, record, error) {
	j, ok := parseObjectJSON(o.JSON)
	if !ok || j.has("generation") || j.has("resourceVersion") {
		return nextDecoded(o, prev, seen)
	}
	content, spec := sha256.Sum256(o.JSON), sha256.Sum256(j.withoutMetadata())
	generation := nextGeneration(prev, seen, spec)
	resourceVersion := resourceVersionOf(content, generation)
	res := resourceOf(o, j.uid(), generation, resourceVersion, j.stamped(generation, resourceVersion))
	return res, record{origin: res.Origin, generation: generation, content: content, spec: spec}, nil
}

// nextDecoded is next for JSON that parseObjectJSON does not take apart:
// it decodes the object, sets its two fields and encodes it again.
func nextDecoded(o manifest.Object, prev record, seen bool) (*busv1.Resource, record, error) {
	obj, err := decodeObject(o.JSON)
	if err != nil {
		return nil, record{}, err
	}
	content, spec, err := hashes(obj)
	if err != nil {
		return nil, record{}, err
	}
	generation := nextGeneration(prev, seen, spec)
	resourceVersion := resourceVersionOf(content, generation)
	meta := obj["metadata"].(map[string]any) // manifest.Decode always sets it
	meta["generation"] = generation
	meta["resourceVersion"] = resourceVersion
	data, err := manifest.EncodeJSON(obj)
	if err != nil {
		return nil, record{}, err
	}
	uid, _ := meta["uid"].(string)
	res := resourceOf(o, uid, generation, resourceVersion, data)
	return res, record{origin: res.Origin, generation: generation, content: content, spec: spec}, nil
}

// nextGeneration is 1 for an object not published before, and otherwise
// the last generation, one more when the object outside metadata (spec,
// its hash) changed.
func nextGeneration(prev record, seen bool, spec [32]byte) int64 {
	if !seen || prev.generation <= 0 {
		return 1
	}
	if spec != prev.spec {
		return prev.generation + 1
	}
	return prev.generation
}

func resourceVersionOf(content [32]byte, generation int64) string {
	rv := sha256.Sum256(append(content[:], strconv.FormatInt(generation, 10)...))
	return hex.EncodeToString(rv[:8])
}

func resourceOf(o manifest.Object, uid string, generation int64, resourceVersion string, data []byte) *busv1.Resource {
	return &busv1.Resource{
		Group: o.Kind.Group, Version: o.Kind.Version, Kind: o.Kind.Kind,
		Namespace: o.Namespace, Name: o.Name, Uid: uid,
		Generation: generation, ResourceVersion: resourceVersion,
		Object: data, Origin: origin(o),
	}
}

// origin is the Origin of o's Resource: "file:<path>:<line>".
func origin(o manifest.Object) string {
	return fmt.Sprintf("%s%s:%d", OriginPrefix, o.Path, o.Line)
}

// recordOf rebuilds the record of a Resource read from the bucket.
func recordOf(res *busv1.Resource) (record, error) {
	obj, err := decodeObject(res.GetObject())
	if err != nil {
		return record{}, err
	}
	content, spec, err := hashes(obj)
	return record{origin: res.GetOrigin(), generation: res.GetGeneration(), content: content, spec: spec}, err
}

// hashes returns the hash of obj without metadata.generation and
// metadata.resourceVersion, and the hash of obj without metadata. obj's
// metadata loses those two fields.
func hashes(obj map[string]any) (content, spec [32]byte, err error) {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return content, spec, fmt.Errorf("object has no metadata")
	}
	delete(meta, "generation")
	delete(meta, "resourceVersion")
	all, err := manifest.EncodeJSON(obj)
	if err != nil {
		return content, spec, err
	}
	delete(obj, "metadata")
	rest, err := manifest.EncodeJSON(obj)
	obj["metadata"] = meta
	return sha256.Sum256(all), sha256.Sum256(rest), err
}

// decodeObject decodes object JSON keeping numbers as they were written.
func decodeObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("object JSON: %w", err)
	}
	return obj, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
