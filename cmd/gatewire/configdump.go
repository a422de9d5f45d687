package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// readTimeout bounds how long a command waits for the bus.
const readTimeout = 30 * time.Second

func runConfigDump(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("config-dump", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: gatewire config-dump [flags] namespace/gateway")
		fmt.Fprintln(fs.Output(), "\nPrints what the Envoys of a gateway are served, read from the xds bucket and shaped as")
		fmt.Fprintln(fs.Output(), "Envoy's /config_dump (envoy.admin.v3.ConfigDump): clusters, endpoints, listeners, routes")
		fmt.Fprintln(fs.Output(), "and secrets, each at the version its type is served at. Private keys and other")
		fmt.Fprintln(fs.Output(), "sensitive fields are printed as \"[redacted]\".\n\nFlags:")
		fs.PrintDefaults()
	}
	conn := busFlags(fs)
	format := fs.String("o", "json", "output format: json or yaml")
	types := fs.String("type", "all", "sections to print, comma-separated: "+strings.Join(dumpTypeNames(), ",")+" (or all)")
	name := fs.String("name", "", "print only the resources whose name matches this pattern (* matches any characters)")
	proxyless := fs.Bool("proxyless", false, "print the API listeners that proxyless gRPC clients get instead of the Envoy listeners")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ns, gw, err := gatewayArg(fs.Args())
	if err != nil {
		return err
	}
	if *format != "json" && *format != "yaml" {
		return usageError("-o %q: want json or yaml", *format)
	}
	filter := dumpFilter{name: globRegexp(*name), proxyless: *proxyless}
	if filter.types, err = parseDumpTypes(*types); err != nil {
		return err
	}
	b, closeBus, err := conn.open(ctx, "gatewire-config-dump")
	if err != nil {
		return err
	}
	defer closeBus()
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	snap, err := readSnapshot(ctx, b, bus.GatewayKey(ns, gw))
	if errors.Is(err, xdsbucket.ErrNoCommit) {
		return fmt.Errorf("gateway %s/%s: the xds bucket has no snapshot of it (not a gatewire Gateway, or not translated yet; see gatewire status)", ns, gw)
	}
	if err != nil {
		return fmt.Errorf("gateway %s/%s: %w", ns, gw, err)
	}
	dump, err := configDump(snap, filter)
	if err != nil {
		return fmt.Errorf("gateway %s/%s: %w", ns, gw, err)
	}
	return printProto(stdout, *format, dump)
}

// readSnapshot reads the snapshot of a gateway from the xds bucket with
// its resources inline.
func readSnapshot(ctx context.Context, b *bus.Bus, gatewayKey string) (*busv1.XdsSnapshot, error) {
	return xdsbucket.Read(ctx, b, gatewayKey)
}

// gatewayArg reads the one namespace/name argument of a command.
func gatewayArg(args []string) (namespace, name string, err error) {
	if len(args) != 1 {
		return "", "", usageError("want one gateway as namespace/name, got %q", args)
	}
	namespace, name, ok := strings.Cut(args[0], "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return "", "", usageError("gateway %q: want namespace/name", args[0])
	}
	return namespace, name, nil
}

// printProto prints m as indented JSON with proto field names and the
// types of Anys, as Envoy's admin API does, or as YAML.
func printProto(w io.Writer, format string, m proto.Message) error {
	data, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		return err
	}
	return printJSON(w, format, data)
}

// printJSON prints a JSON document indented, or as YAML.
func printJSON(w io.Writer, format string, data []byte) error {
	if format == "yaml" {
		y, err := jsonToYAML(data)
		if err != nil {
			return err
		}
		_, err = w.Write(y)
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, data, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err := out.WriteTo(w)
	return err
}
