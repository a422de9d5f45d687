package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sync"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/gatewire/gatewire/pkg/bus"
	_ "github.com/gatewire/gatewire/proto/gatewire/bus/v1" // registers the bus payloads
	_ "github.com/gatewire/gatewire/proto/gatewire/ir/v1"  // registers the IR
	_ "github.com/gatewire/gatewire/services/xds"          // registers the Envoy types the xds bucket holds
)

// tapLine is one printed change.
type tapLine struct {
	Bucket         string          `json:"bucket"`
	Key            string          `json:"key"`
	Op             string          `json:"op"`
	Revision       uint64          `json:"revision"`
	SourceRevision uint64          `json:"sourceRevision,omitempty"`
	Type           string          `json:"type,omitempty"`
	Traceparent    string          `json:"traceparent,omitempty"`
	Value          json.RawMessage `json:"value,omitempty"`
	Error          string          `json:"error,omitempty"`
}

func runTap(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("tap", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: gatewire tap [flags] [bucket] [key pattern]")
		fmt.Fprintln(fs.Output(), "\nPrints the current value of every matching key, then every change, one JSON object a line.")
		fmt.Fprintln(fs.Output(), "bucket is one of resources, status, ir, xds, infra, members (default: all); the key")
		fmt.Fprintln(fs.Output(), "pattern uses NATS wildcards, for example 'HTTPRoute.default.*' (default '>').\n\nFlags:")
		fs.PrintDefaults()
	}
	conn := busFlags(fs)
	changes := fs.Bool("changes", false, "print only changes, not the current values")
	if err := fs.Parse(args); err != nil {
		return err
	}
	buckets, pattern, err := tapArgs(fs.Args())
	if err != nil {
		return err
	}
	b, closeBus, err := conn.open(ctx, "gatewire-tap", nats.MaxReconnects(-1))
	if err != nil {
		return err
	}
	defer closeBus()
	return tap(ctx, b, buckets, pattern, !*changes, stdout)
}

func tapArgs(args []string) ([]bus.Bucket, string, error) {
	if len(args) > 2 {
		return nil, "", usageError("want at most a bucket and a key pattern, got %q", args)
	}
	buckets, pattern := bus.Buckets, ">"
	if len(args) > 0 && args[0] != "all" {
		buckets = nil
		for _, b := range bus.Buckets {
			if string(b) == args[0] {
				buckets = []bus.Bucket{b}
			}
		}
		if buckets == nil {
			return nil, "", usageError("unknown bucket %q: want one of %v", args[0], bus.Buckets)
		}
	}
	if len(args) > 1 {
		pattern = args[1]
	}
	return buckets, pattern, nil
}

// tap prints the entries of buckets matching pattern until ctx is done.
func tap(ctx context.Context, b *bus.Bus, buckets []bus.Bucket, pattern string, initial bool, w io.Writer) error {
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	enc := json.NewEncoder(w)
	for _, bucket := range buckets {
		watcher, err := b.Watch(ctx, bucket, pattern)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer watcher.Stop()
			synced := false
			for e := range watcher.Updates() {
				if e == nil {
					synced = true
					continue
				}
				if !synced && !initial {
					continue
				}
				mu.Lock()
				_ = enc.Encode(tapEntry(e))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return nil
}

func tapEntry(e *bus.Entry) tapLine {
	l := tapLine{
		Bucket: string(e.Bucket), Key: e.Key, Op: e.Op.String(), Revision: e.Revision,
		SourceRevision: e.SourceRevision, Type: e.Header.Get(bus.HeaderType),
		Traceparent: e.Header.Get("traceparent"),
	}
	if e.Err != nil {
		l.Error = e.Err.Error()
	}
	if e.Value != nil {
		if data, err := protojson.Marshal(e.Value); err != nil {
			l.Error = err.Error()
		} else {
			l.Value = data
		}
	}
	return l
}
