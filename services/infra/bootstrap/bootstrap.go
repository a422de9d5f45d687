// Package bootstrap renders the Envoy bootstrap that connects one Envoy to
// gatewire's xds service. The same bootstrap is used by every way gatewire runs
// Envoy: the infra service in host mode (a file per gateway), in Kubernetes mode
// (a ConfigMap per gateway) and the `gatewire bootstrap` command.
//
// The bootstrap holds only what Envoy needs before it can reach the xds service:
//
//   - node.cluster is the gateway, <namespace>/<gateway>. The xds service serves
//     every Envoy of a gateway the snapshot of that gateway, by node.cluster.
//   - node.id names one Envoy: <namespace>/<gateway>/<instance>, where instance
//     is the host name for host mode and the pod name in Kubernetes. Envoy's
//     --service-node flag overrides it, which is how a Deployment gives each pod
//     its own id from one ConfigMap.
//   - dynamic_resources: listeners and clusters over one ADS stream (state of
//     the world gRPC, transport V3) to the static cluster xds_cluster.
//   - static_resources: xds_cluster, HTTP/2 to the xds address, STATIC when its
//     host is an IP address and STRICT_DNS otherwise, with TCP and HTTP/2
//     keepalives so a dead xds replica is noticed and another one is used.
//   - with Options.TLS (the default of every mode but the insecure one), the
//     xds_cluster speaks TLS 1.3 with ALPN h2: its client certificate (the
//     gateway's, spiffe://<trust domain>/ns/<ns>/gateway/<name>) and the CA
//     bundle come from two SDS files (path_config_source) that name the
//     files of a certificate folder and watch it (SDSFiles), so Envoy picks
//     up a rotated certificate without a restart, and the server must
//     present the xds SPIFFE ID (match_typed_subject_alt_names).
//   - admin on loopback only, its access log discarded.
//   - with Options.ReadinessPort, a static listener gatewire_readiness on
//     0.0.0.0 that forwards GET /ready to the admin interface (static cluster
//     gatewire_admin) and answers 404 to anything else: what a kubelet probes.
//   - layered_runtime with an empty static layer and an admin layer, so runtime
//     flags can be changed through the admin endpoint.
//
// Render returns the proto, checked with ValidateAll; MarshalYAML and MarshalJSON
// turn it into bytes that are identical for identical input.
package bootstrap

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
)

const (
	// XDSClusterName is the name of the static cluster that points at the xds
	// service; the ADS config refers to it.
	XDSClusterName = "xds_cluster"
	// DefaultXDSAddress is the xds service of a gatewire running on this host.
	DefaultXDSAddress = "127.0.0.1:18000"
	// DefaultAdminPort is Envoy's usual admin port.
	DefaultAdminPort = 19000
	// AdminAddress is where the admin interface listens: loopback only, as it
	// can stop Envoy and change its runtime.
	AdminAddress = "127.0.0.1"

	// xdsConnectTimeout bounds one connection attempt to the xds service;
	// Envoy retries with backoff.
	xdsConnectTimeout = 5 * time.Second
	// An HTTP/2 PING every xdsKeepaliveInterval, unanswered for
	// xdsKeepaliveTimeout, closes the ADS connection so Envoy reconnects.
	xdsKeepaliveInterval = 30 * time.Second
	xdsKeepaliveTimeout  = 5 * time.Second
)

// Options say which gateway an Envoy serves and where it finds the xds service.
type Options struct {
	// Cluster is node.cluster, <namespace>/<gateway> (see NodeCluster). Required.
	Cluster string
	// NodeID is node.id. Empty means NodeID(Cluster, <host name>).
	NodeID string
	// XDSAddress is the host:port of the xds service; the host is an IP address
	// or a DNS name. Empty means DefaultXDSAddress.
	XDSAddress string
	// AdminPort is the port of the admin interface on 127.0.0.1; 0 lets Envoy
	// pick a free port (see Envoy's --admin-address-path).
	AdminPort uint32
	// ReadinessPort, when not 0, adds a listener on 0.0.0.0 at this port that
	// answers GET /ready from the admin interface and 404 to anything else:
	// the target of a kubelet readiness probe, as the admin interface itself
	// only listens on loopback. It needs a fixed AdminPort.
	ReadinessPort uint32
	// TLS connects to the xds service over mTLS. Nil means plaintext, for
	// a development xds service started with GATEWIRE_XDS_INSECURE=true.
	TLS *TLS
}

// NodeCluster is the node.cluster of the Envoys of a gateway.
func NodeCluster(namespace, gateway string) string {
	return namespace + "/" + gateway
}

// NodeID is the node.id of one Envoy of a gateway: the node cluster and an
// instance name, the host name or the pod name.
func NodeID(cluster, instance string) string {
	return cluster + "/" + instance
}

// Render builds the bootstrap of an Envoy and checks it with ValidateAll. The
// returned proto is new and owned by the caller.
func Render(opts Options) (*bootstrapv3.Bootstrap, error) {
	node, err := renderNode(opts)
	if err != nil {
		return nil, err
	}
	xdsAddress := opts.XDSAddress
	if xdsAddress == "" {
		xdsAddress = DefaultXDSAddress
	}
	xds, err := xdsCluster(xdsAddress, opts.TLS)
	if err != nil {
		return nil, fmt.Errorf("bootstrap for %q: %w", opts.Cluster, err)
	}
	adm, err := admin(opts.AdminPort)
	if err != nil {
		return nil, err
	}
	static := &bootstrapv3.Bootstrap_StaticResources{Clusters: xds}
	if opts.ReadinessPort != 0 {
		l, c, err := readiness(opts.ReadinessPort, opts.AdminPort)
		if err != nil {
			return nil, fmt.Errorf("bootstrap for %q: %w", opts.Cluster, err)
		}
		static.Listeners = append(static.Listeners, l)
		static.Clusters = append(static.Clusters, c)
	}
	b := &bootstrapv3.Bootstrap{
		Node:             node,
		DynamicResources: dynamicResources(),
		StaticResources:  static,
		Admin:            adm,
		LayeredRuntime:   layeredRuntime(),
	}
	if err := b.ValidateAll(); err != nil {
		return nil, fmt.Errorf("bootstrap for %q: %w", opts.Cluster, err)
	}
	return b, nil
}

func renderNode(opts Options) (*corev3.Node, error) {
	if err := checkCluster(opts.Cluster); err != nil {
		return nil, err
	}
	id := opts.NodeID
	if id == "" {
		instance, err := hostname()
		if err != nil {
			return nil, err
		}
		id = NodeID(opts.Cluster, instance)
	}
	return &corev3.Node{Id: id, Cluster: opts.Cluster}, nil
}

func checkCluster(cluster string) error {
	ns, gw, ok := strings.Cut(cluster, "/")
	if !ok || ns == "" || gw == "" || strings.Contains(gw, "/") {
		return fmt.Errorf("node cluster %q: want <namespace>/<gateway>", cluster)
	}
	return nil
}

// splitAddress splits host:port and checks both parts.
func splitAddress(address string) (host string, port uint32, err error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return "", 0, fmt.Errorf("xds address %q: %w", address, err)
	}
	if host == "" {
		return "", 0, fmt.Errorf("xds address %q: empty host", address)
	}
	p, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || p == 0 {
		return "", 0, fmt.Errorf("xds address %q: port must be 1-65535", address)
	}
	return host, uint32(p), nil
}

// CheckXDSAddress reports whether address is a usable xds address, host:port.
func CheckXDSAddress(address string) error {
	_, _, err := splitAddress(address)
	return err
}

var errNoHostname = errors.New("no host name for node.id; set Options.NodeID")

var (
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// CheckGateway reports whether namespace and name are a Kubernetes namespace
// (a DNS label) and object name (a DNS subdomain), which also makes them safe
// in a file name and a Kubernetes object name derived from them.
func CheckGateway(namespace, name string) error {
	if len(namespace) > 63 || !dnsLabel.MatchString(namespace) {
		return fmt.Errorf("gateway %q/%q: namespace must be a DNS label", namespace, name)
	}
	if len(name) > 253 || !dnsSubdomain.MatchString(name) {
		return fmt.Errorf("gateway %q/%q: name must be a DNS subdomain", namespace, name)
	}
	return nil
}
