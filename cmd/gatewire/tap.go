package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/nats-io/nats.go"

	"github.com/gatewire/gatewire/pkg/bus"
	_ "github.com/gatewire/gatewire/proto/gatewire/bus/v1" // registers the bus payloads
	_ "github.com/gatewire/gatewire/proto/gatewire/ir/v1"  // registers the IR
	_ "github.com/gatewire/gatewire/services/xds"          // registers the Envoy types the xds bucket holds
)

func runTap(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("tap", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: gatewire tap [flags] [bucket] [key pattern]")
		fmt.Fprintln(fs.Output(), "\nPrints the current value of every matching key, then every change, decoded: a line per")
		fmt.Fprintln(fs.Output(), "change and its value as YAML, or with -o json one JSON object a line. Kubernetes objects and")
		fmt.Fprintln(fs.Output(), "xDS resources are printed decoded. bucket is one of resources, status, ir, xds, infra,")
		fmt.Fprintln(fs.Output(), "members, proxies (default: all but members and proxies, rewritten every few seconds; see")
		fmt.Fprintln(fs.Output(), "-members and -all);")
		fmt.Fprintln(fs.Output(), "the key pattern uses NATS wildcards, for example 'HTTPRoute.default.*' (default '>').\n\nFlags:")
		fs.PrintDefaults()
	}
	conn := busFlags(fs)
	changes := fs.Bool("changes", false, "print only changes, not the current values")
	members := fs.Bool("members", false, "also print the translators' heartbeats (the members bucket)")
	all := fs.Bool("all", false, "print every bucket, the translators' heartbeats and the xDS streams' status (proxies) included")
	format := fs.String("o", "text", "output format: text (for people) or json (one object a line)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	buckets, pattern, err := tapArgs(fs.Args(), *members || *all, *all)
	if err != nil {
		return err
	}
	printer, err := newTapPrinter(*format, stdout)
	if err != nil {
		return err
	}
	b, closeBus, err := conn.open(ctx, "gatewire-tap", nats.MaxReconnects(-1))
	if err != nil {
		return err
	}
	defer closeBus()
	return tap(ctx, b, buckets, pattern, !*changes, printer)
}

// tapArgs reads the bucket and key pattern arguments. Without a bucket,
// it is every bucket but those rewritten on a timer: the translators'
// heartbeats (members) unless withMembers, and the xDS streams' status
// (proxies) unless withProxies.
func tapArgs(args []string, withMembers, withProxies bool) ([]bus.Bucket, string, error) {
	if len(args) > 2 {
		return nil, "", usageError("want at most a bucket and a key pattern, got %q", args)
	}
	buckets, pattern := bus.Buckets, ">"
	if len(args) == 0 || args[0] == "all" {
		buckets = slices.DeleteFunc(slices.Clone(bus.Buckets), func(b bus.Bucket) bool {
			return (b == bus.Members && !withMembers) || (b == bus.Proxies && !withProxies)
		})
	}
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
