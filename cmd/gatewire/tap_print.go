package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// tapLine is one printed change, the object a line of -o json.
type tapLine struct {
	Bucket         string            `json:"bucket"`
	Key            string            `json:"key"`
	Op             string            `json:"op"`
	Revision       uint64            `json:"revision"`
	SourceRevision uint64            `json:"sourceRevision,omitempty"`
	Type           string            `json:"type,omitempty"`
	Traceparent    string            `json:"traceparent,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	Value          json.RawMessage   `json:"value,omitempty"`
	Error          string            `json:"error,omitempty"`
}

// tap prints the entries of buckets matching pattern until ctx is done.
func tap(ctx context.Context, b *bus.Bus, buckets []bus.Bucket, pattern string, initial bool, p *tapPrinter) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // before the Wait: ends the watches opened
	for _, bucket := range buckets {
		watcher, err := b.Watch(ctx, bucket, pattern)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil // interrupted while the watches were opened
		case err != nil:
			return err // the watches opened end with ctx
		}
		wg.Go(func() {
			defer watcher.Stop()
			synced := false
			for e := range watcher.Updates() {
				if e == nil {
					synced = true
					continue
				}
				if synced || initial {
					p.print(e)
				}
			}
		})
	}
	wg.Wait()
	return nil
}

// tapPrinter prints entries for people (text) or machines (json). It is
// safe for concurrent use.
type tapPrinter struct {
	mu   sync.Mutex
	w    io.Writer
	json bool
}

func newTapPrinter(format string, w io.Writer) (*tapPrinter, error) {
	if format != "text" && format != "json" {
		return nil, usageError("-o %q: want text or json", format)
	}
	return &tapPrinter{w: w, json: format == "json"}, nil
}

func (p *tapPrinter) print(e *bus.Entry) {
	l := tapEntry(e)
	var out []byte
	if p.json {
		out, _ = json.Marshal(l)
		out = append(out, '\n')
	} else {
		out = textEntry(e, l)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = p.w.Write(out)
}

// shownHeaders are the headers a line shows besides its own fields.
var shownHeaders = []string{bus.HeaderEncoding, bus.HeaderObject, bus.HeaderDigest, bus.HeaderWriter, bus.HeaderPublished, "tracestate"}

func tapEntry(e *bus.Entry) tapLine {
	l := tapLine{
		Bucket: string(e.Bucket), Key: e.Key, Op: e.Op.String(), Revision: e.Revision,
		SourceRevision: e.SourceRevision, Type: e.Header.Get(bus.HeaderType),
		Traceparent: e.Header.Get("traceparent"),
	}
	for _, h := range shownHeaders {
		if v := e.Header.Get(h); v != "" {
			if l.Headers == nil {
				l.Headers = map[string]string{}
			}
			l.Headers[h] = v
		}
	}
	if e.Err != nil {
		l.Error = e.Err.Error()
	}
	if e.Value != nil {
		if data, err := valueJSON(e.Value); err != nil {
			l.Error = err.Error()
		} else {
			l.Value = data
		}
	}
	return l
}

// valueJSON is a bus value as JSON, with proto field names, and with the
// bytes people want to read decoded: the Kubernetes object of a Resource
// as a JSON object, the Envoy resource of an XdsResource as its message.
func valueJSON(m proto.Message) (json.RawMessage, error) {
	data, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	var inner json.RawMessage
	var field string
	switch v := m.(type) {
	case *busv1.Resource:
		if json.Valid(v.GetObject()) {
			field, inner = "object", v.GetObject()
		}
	case *busv1.XdsResource:
		if decoded, err := envoyJSON(v.GetTypeUrl(), v.GetValue()); err == nil {
			field, inner = "value", decoded
		}
	}
	if inner == nil {
		return compact(data), nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	fields[field] = inner
	out, err := json.Marshal(fields)
	return out, err
}

// envoyJSON decodes a serialized Envoy resource of the type typeURL names.
func envoyJSON(typeURL string, value []byte) (json.RawMessage, error) {
	name := protoreflect.FullName(typeURL[strings.LastIndexByte(typeURL, '/')+1:])
	mt, err := protoregistry.GlobalTypes.FindMessageByName(name)
	if err != nil {
		return nil, err
	}
	m := mt.New().Interface()
	if err := proto.Unmarshal(value, m); err != nil {
		return nil, err
	}
	if err := redact(m.ProtoReflect()); err != nil {
		return nil, err
	}
	return protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
}

func compact(data []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, data) != nil {
		return data
	}
	return b.Bytes()
}

// textEntry is an entry for people: a line that says what changed, then
// its value as YAML, indented; sync marks and heartbeats in one line.
func textEntry(e *bus.Entry, l tapLine) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s %s  revision %d", l.Bucket, l.Op, l.Key, l.Revision)
	if l.SourceRevision != 0 {
		fmt.Fprintf(&b, "  source revision %d", l.SourceRevision)
	}
	if t, ok := e.Published(); ok {
		fmt.Fprintf(&b, "  published %s", stamp(t))
	}
	if w := e.Header.Get(bus.HeaderWriter); w != "" {
		fmt.Fprintf(&b, "  by %s", w)
	}
	switch v := e.Value.(type) {
	case *busv1.SyncMark:
		fmt.Fprintf(&b, "  %s\n", syncLine(v))
		return b.Bytes()
	case *busv1.Member:
		fmt.Fprintf(&b, "  heartbeat %s, up since %s\n", stamp(time.Unix(0, v.GetHeartbeatUnixNano())), stamp(time.Unix(0, v.GetStartedUnixNano())))
		return b.Bytes()
	}
	if l.Type != "" {
		fmt.Fprintf(&b, "  %s", l.Type)
	}
	b.WriteByte('\n')
	if l.Error != "" {
		fmt.Fprintf(&b, "  error: %s\n", l.Error)
	}
	if l.Value != nil {
		y, err := jsonToYAML(l.Value)
		if err != nil {
			y = l.Value
		}
		for _, line := range strings.SplitAfter(strings.TrimSuffix(string(y), "\n"), "\n") {
			b.WriteString("  " + line)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// syncLine says what a provider's sync mark says.
func syncLine(m *busv1.SyncMark) string {
	switch m.GetState() {
	case busv1.SyncMark_STATE_SYNCING:
		s := fmt.Sprintf("SYNCING: %s provider %s writing since %s", m.GetSource(), m.GetProvider(), stamp(time.Unix(0, m.GetStartedUnixNano())))
		if d := m.GetDeadlineUnixNano(); d != 0 {
			s += ", readers wait until " + stamp(time.Unix(0, d))
		}
		return s
	case busv1.SyncMark_STATE_SYNCED:
		return fmt.Sprintf("SYNCED: %s provider %s wrote %d objects, up to revision %d (sync started %s)",
			m.GetSource(), m.GetProvider(), m.GetObjects(), m.GetRevision(), stamp(time.Unix(0, m.GetStartedUnixNano())))
	}
	return m.GetState().String()
}

func stamp(t time.Time) string { return t.Local().Format("2006-01-02T15:04:05.000Z07:00") }
