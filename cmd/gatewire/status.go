package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

func runStatus(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: gatewire status [flags] [namespace/gateway]")
		fmt.Fprintln(fs.Output(), "\nPrints what the bus holds of every gateway (or one): its Accepted and Programmed")
		fmt.Fprintln(fs.Output(), "conditions and listeners, the xDS snapshot served to its Envoys, what Envoys rejected,")
		fmt.Fprintln(fs.Output(), "its proxies' addresses; then the translator replicas.\n\nFlags:")
		fs.PrintDefaults()
	}
	conn := busFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 1 || (fs.NArg() == 1 && strings.Count(fs.Arg(0), "/") != 1) {
		return usageError("want at most one gateway as namespace/name, got %q", fs.Args())
	}
	b, closeBus, err := conn.open(ctx, "gatewire-status")
	if err != nil {
		return err
	}
	defer closeBus()
	return printStatus(ctx, b, fs.Arg(0), time.Now(), stdout)
}

// gatewayView is what the bus holds of one gateway.
type gatewayView struct {
	name      string        // namespace/name
	own       *busv1.Status // the translator's entry for the Gateway itself
	snapshot  *busv1.XdsSnapshot
	dataPlane map[string]*busv1.Status // by xds replica
	infra     *busv1.Status
}

// printStatus prints the gateways the bus knows (or only the gateway only, a
// namespace/name, when it is not empty) and the translator replicas.
func printStatus(ctx context.Context, b *bus.Bus, only string, now time.Time, w io.Writer) error {
	views := map[string]*gatewayView{}
	view := func(ns, name string) *gatewayView {
		key := ns + "/" + name
		if views[key] == nil {
			views[key] = &gatewayView{name: key, dataPlane: map[string]*busv1.Status{}}
		}
		return views[key]
	}
	if err := readStatus(ctx, b, view); err != nil {
		return err
	}
	if err := readSnapshots(ctx, b, view); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	names := slices.Sorted(maps.Keys(views))
	if only != "" {
		if views[only] == nil {
			return fmt.Errorf("gateway %s: the bus holds nothing of it (known: %s)", only, strings.Join(names, ", "))
		}
		names = []string{only}
	}
	for _, name := range names {
		printGateway(tw, views[name])
	}
	if err := printMembers(ctx, b, now, tw); err != nil {
		return err
	}
	return tw.Flush()
}

// readStatus reads the status entries of Gateways: the translator's, the
// xds replicas' and infra's.
func readStatus(ctx context.Context, b *bus.Bus, view func(ns, name string) *gatewayView) error {
	keys, err := b.Keys(ctx, bus.Status, "Gateway.>")
	if err != nil {
		return fmt.Errorf("list %s: %w", bus.Status, err)
	}
	for _, key := range keys {
		s, err := getStatus(ctx, b, key)
		if err != nil {
			return err
		}
		if s == nil {
			continue // deleted between the listing and the read
		}
		t := strings.Split(key, ".")
		_, ns, name, gwNS, gwName, _ := bus.ParseStatusKey(key)
		switch {
		case len(t) == 5 && t[3] == bus.DataPlane:
			view(ns, name).dataPlane[gwName] = s
		case len(t) == 5 && t[3] == bus.Infrastructure:
			view(ns, name).infra = s
		case ns == gwNS && name == gwName:
			view(ns, name).own = s
		}
	}
	return nil
}

func getStatus(ctx context.Context, b *bus.Bus, key string) (*busv1.Status, error) {
	e, err := b.Get(ctx, bus.Status, key)
	if errors.Is(err, bus.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", bus.Status, key, err)
	}
	s, _ := e.Value.(*busv1.Status)
	return s, nil
}

// readSnapshots reads the snapshot of every gateway of the xds bucket,
// with its resources (package xdsbucket).
func readSnapshots(ctx context.Context, b *bus.Bus, view func(ns, name string) *gatewayView) error {
	keys, err := b.Keys(ctx, bus.XDS, xdsbucket.CommitPattern)
	if err != nil {
		return fmt.Errorf("list %s: %w", bus.XDS, err)
	}
	for _, key := range keys {
		ns, name, err := bus.ParseGatewayKey(key)
		if err != nil {
			continue
		}
		x, err := xdsbucket.Read(ctx, b, key)
		if errors.Is(err, xdsbucket.ErrNoCommit) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s %s: %w", bus.XDS, key, err)
		}
		view(ns, name).snapshot = x
	}
	return nil
}

func printGateway(w io.Writer, v *gatewayView) {
	fmt.Fprintf(w, "gateway %s\n", v.name)
	if v.own == nil {
		fmt.Fprintln(w, "  status\tnone from a translator (not ours, or not translated yet)")
	}
	for _, c := range v.own.GetConditions() {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", c.GetType(), c.GetStatus(), c.GetReason(), c.GetMessage())
	}
	for _, l := range v.own.GetListeners() {
		fmt.Fprintf(w, "  listener %s\t%d routes\t%s\n", l.GetName(), l.GetAttachedRoutes(), conditionsLine(l.GetConditions()))
	}
	if x := v.snapshot; x != nil {
		var counts []string
		for _, t := range x.GetResources() {
			typ := t.GetTypeUrl()[strings.LastIndex(t.GetTypeUrl(), ".")+1:]
			counts = append(counts, fmt.Sprintf("%d %s", len(t.GetResources()), typ))
		}
		fmt.Fprintf(w, "  xds\tversion %s\tsource revision %d\t%s; %d proxyless listeners\n", x.GetVersion(),
			x.GetSourceRevision(), strings.Join(counts, ", "), len(x.GetProxylessListeners()))
	} else {
		fmt.Fprintln(w, "  xds\tno snapshot")
	}
	if addrs := v.infra.GetAddresses(); len(addrs) > 0 {
		fmt.Fprintf(w, "  addresses\t%s\n", strings.Join(addrs, ", "))
	}
	if len(v.dataPlane) == 0 {
		fmt.Fprintln(w, "  envoys\tno rejection reported")
	}
	for _, replica := range slices.Sorted(maps.Keys(v.dataPlane)) {
		fmt.Fprintf(w, "  envoys via %s\t%s\n", replica, conditionsLine(v.dataPlane[replica].GetConditions()))
	}
}

// conditionsLine is "Type=Status (Reason: message)" for each condition, the
// reason and message only when the status is not True.
func conditionsLine(cs []*busv1.Condition) string {
	var parts []string
	for _, c := range cs {
		p := c.GetType() + "=" + c.GetStatus()
		if c.GetStatus() != "True" {
			p += fmt.Sprintf(" (%s: %s)", c.GetReason(), c.GetMessage())
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

func printMembers(ctx context.Context, b *bus.Bus, now time.Time, w io.Writer) error {
	keys, err := b.Keys(ctx, bus.Members, ">")
	if err != nil {
		return fmt.Errorf("list %s: %w", bus.Members, err)
	}
	var members []*busv1.Member
	for _, key := range keys {
		e, err := b.Get(ctx, bus.Members, key)
		if err != nil {
			continue // left between the listing and the read
		}
		if m, ok := e.Value.(*busv1.Member); ok {
			members = append(members, m)
		}
	}
	slices.SortFunc(members, func(a, b *busv1.Member) int { return cmp.Compare(a.GetId(), b.GetId()) })
	fmt.Fprintf(w, "translators\t%d\n", len(members))
	for _, m := range members {
		age := now.Sub(time.Unix(0, m.GetHeartbeatUnixNano())).Round(100 * time.Millisecond)
		fmt.Fprintf(w, "  %s\theartbeat %s ago\n", m.GetId(), age)
	}
	return nil
}
