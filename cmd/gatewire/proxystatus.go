package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

func runProxyStatus(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("proxy-status", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: gatewire proxy-status [flags] [namespace/gateway]")
		fmt.Fprintln(fs.Output(), "\nPrints every Envoy and proxyless gRPC client connected to an xds replica (or those of")
		fmt.Fprintln(fs.Output(), "one gateway): its node id, gateway, replica, how long it has been connected, and for each")
		fmt.Fprintln(fs.Output(), "xDS type whether it acknowledged the version the gateway is served at now (SYNCED),")
		fmt.Fprintln(fs.Output(), "holds an older one (STALE) or rejected it (NACKED, with the client's message). The xds")
		fmt.Fprintln(fs.Output(), "replicas publish their streams in the proxies bucket.\n\nFlags:")
		fs.PrintDefaults()
	}
	conn := busFlags(fs)
	format := fs.String("o", "table", "output format: table, json or yaml")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *format != "table" && *format != "json" && *format != "yaml" {
		return usageError("-o %q: want table, json or yaml", *format)
	}
	pattern := ">"
	if fs.NArg() > 0 {
		ns, gw, err := gatewayArg(fs.Args())
		if err != nil {
			return err
		}
		pattern = bus.GatewayKey(ns, gw) + ".>"
	}
	b, closeBus, err := conn.open(ctx, "gatewire-proxy-status")
	if err != nil {
		return err
	}
	defer closeBus()
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	proxies, err := readProxies(ctx, b, pattern, time.Now())
	if err != nil {
		return err
	}
	return printProxies(stdout, *format, proxies)
}

// proxyView is one stream with the state of each of its types.
type proxyView struct {
	NodeID    string     `json:"node_id"`
	Gateway   string     `json:"gateway"`
	Replica   string     `json:"replica"`
	Stream    string     `json:"stream"`
	Connected string     `json:"connected"`
	Since     time.Time  `json:"connected_at"`
	Proxyless bool       `json:"proxyless,omitempty"`
	Delta     bool       `json:"delta,omitempty"`
	UserAgent string     `json:"user_agent,omitempty"`
	Types     []typeView `json:"types"`
}

// typeView is where one xDS type of a stream stands against what the
// gateway is served now.
type typeView struct {
	Type     string `json:"type"`
	TypeURL  string `json:"type_url"`
	State    string `json:"state"`
	Latest   string `json:"latest_version,omitempty"`
	Acked    string `json:"acked_version,omitempty"`
	Sent     string `json:"sent_version,omitempty"`
	Nacked   string `json:"nacked_version,omitempty"`
	NackInfo string `json:"nack_detail,omitempty"`
}

// The states of a type.
const (
	stateSynced       = "SYNCED"
	stateStale        = "STALE"
	stateNacked       = "NACKED"
	stateNotRequested = "-"
	stateUnknown      = "UNKNOWN" // the gateway has no snapshot on the bus
)

// xdsTypes are the columns of the table, in the order istioctl prints
// them.
var xdsTypes = []struct{ short, url string }{
	{"CDS", xdsbucket.ClusterType},
	{"LDS", xdsbucket.ListenerType},
	{"EDS", xdsbucket.EndpointType},
	{"RDS", xdsbucket.RouteType},
	{"SDS", xdsbucket.SecretType},
}

// readProxies reads the streams whose keys match pattern and compares
// each with the commit of its gateway.
func readProxies(ctx context.Context, b *bus.Bus, pattern string, now time.Time) ([]proxyView, error) {
	keys, err := b.Keys(ctx, bus.Proxies, pattern)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", b.BucketName(bus.Proxies), err)
	}
	latest := map[string]map[string]string{} // gateway key → type URL → version
	var out []proxyView
	for _, key := range keys {
		ns, gw, _, _, err := bus.ParseProxyKey(key)
		if err != nil {
			continue
		}
		e, err := b.Get(ctx, bus.Proxies, key)
		if errors.Is(err, bus.ErrNotFound) {
			continue // the stream ended between the listing and the read
		}
		if err != nil {
			return nil, fmt.Errorf("read %s %s: %w", b.BucketName(bus.Proxies), key, err)
		}
		st, ok := e.Value.(*busv1.ProxyStatus)
		if !ok {
			continue
		}
		gk := bus.GatewayKey(ns, gw)
		if latest[gk] == nil {
			if latest[gk], err = servedVersions(ctx, b, gk); err != nil {
				return nil, err
			}
		}
		out = append(out, viewOf(st, ns+"/"+gw, latest[gk], now))
	}
	slices.SortFunc(out, func(a, b proxyView) int {
		return cmp.Or(cmp.Compare(a.Gateway, b.Gateway), cmp.Compare(a.NodeID, b.NodeID), cmp.Compare(a.Replica, b.Replica), cmp.Compare(a.Stream, b.Stream))
	})
	return out, nil
}

// servedVersions are the versions a gateway's types are served at, from
// its commit in the xds bucket; the proxyless listeners under
// "proxyless". Empty when the gateway has no commit.
func servedVersions(ctx context.Context, b *bus.Bus, gatewayKey string) (map[string]string, error) {
	out := map[string]string{}
	e, err := b.Get(ctx, bus.XDS, gatewayKey)
	if errors.Is(err, bus.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", b.BucketName(bus.XDS), gatewayKey, err)
	}
	commit, ok := e.Value.(*busv1.XdsSnapshot)
	if !ok {
		return out, nil
	}
	for _, t := range xdsTypes {
		out[t.url] = commit.GetVersion()
	}
	for _, typed := range commit.GetResources() {
		if v := typed.GetVersion(); v != "" {
			out[typed.GetTypeUrl()] = v
		}
	}
	out["proxyless"] = cmp.Or(commit.GetProxyless().GetVersion(), commit.GetVersion())
	return out, nil
}

// viewOf compares a stream's types with the versions served.
func viewOf(st *busv1.ProxyStatus, gateway string, served map[string]string, now time.Time) proxyView {
	since := time.Unix(0, st.GetConnectedUnixNano())
	v := proxyView{NodeID: st.GetNodeId(), Gateway: gateway, Replica: st.GetReplica(), Stream: st.GetStream(),
		Since: since.UTC(), Connected: now.Sub(since).Round(time.Second).String(),
		Proxyless: st.GetProxyless(), Delta: st.GetDelta(), UserAgent: st.GetUserAgent()}
	byURL := map[string]*busv1.ProxyTypeStatus{}
	for _, t := range st.GetTypes() {
		byURL[t.GetTypeUrl()] = t
	}
	for _, t := range xdsTypes {
		latest := served[t.url]
		if t.url == xdsbucket.ListenerType && st.GetProxyless() {
			latest = served["proxyless"]
		}
		v.Types = append(v.Types, typeState(t.short, t.url, byURL[t.url], latest))
	}
	return v
}

func typeState(short, url string, t *busv1.ProxyTypeStatus, latest string) typeView {
	tv := typeView{Type: short, TypeURL: url, Latest: latest}
	if t == nil {
		tv.State = stateNotRequested
		return tv
	}
	tv.Acked, tv.Sent, tv.Nacked, tv.NackInfo = t.GetAckedVersion(), t.GetSentVersion(), t.GetNackedVersion(), t.GetNackDetail()
	switch {
	case tv.Nacked != "":
		tv.State = stateNacked
	case latest == "":
		tv.State = stateUnknown
	case tv.Acked == latest:
		tv.State = stateSynced
	default:
		tv.State = stateStale
	}
	return tv
}

// shortVersion is the start of a version hash, as a table shows it.
func shortVersion(v string) string {
	if len(v) > 8 {
		return v[:8]
	}
	return strings.TrimSpace(v)
}
