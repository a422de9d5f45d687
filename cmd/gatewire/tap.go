package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

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

// busConn holds the flags that name an installation's bus.
type busConn struct{ url, system *string }

// busFlags defines -nats-url and -system on fs.
func busFlags(fs *flag.FlagSet) busConn {
	return busConn{
		url:    fs.String("nats-url", envOr("GATEWIRE_NATS_URL", "nats://127.0.0.1:4222"), "NATS server URL"),
		system: fs.String("system", envOr("GATEWIRE_SYSTEM", "gatewire"), "installation name"),
	}
}

// open connects to the installation's NATS server as client name and opens
// its buckets without changing them; disconnect closes the connection.
func (c busConn) open(ctx context.Context, name string, opts ...nats.Option) (b *bus.Bus, disconnect func(), err error) {
	nc, err := nats.Connect(*c.url, append(opts, nats.Name(name))...)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", *c.url, err)
	}
	b, err = bus.New(ctx, nc, bus.WithSystem(*c.system), bus.WithOpenOnly())
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("open the buckets of installation %q on %s (is gatewire running there?): %w", *c.system, *c.url, err)
	}
	return b, nc.Close, nil
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

func envOr(name, def string) string {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	return def
}
