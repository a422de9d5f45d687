package bootstrap

import (
	"encoding/json"
	"fmt"
	"path"
	"time"
)

// ProxylessMetadata is the node metadata key that makes the xds service
// serve a node as a proxyless gRPC client (API listeners per hostname).
const ProxylessMetadata = "gatewire.dev/proxyless"

// DefaultRefreshInterval is how often a proxyless client reads its
// certificate files again.
const DefaultRefreshInterval = time.Minute

// ProxylessOptions say which gateway a proxyless gRPC client is a node of,
// where it finds the xds service, and its certificate.
type ProxylessOptions struct {
	// Cluster is node.cluster, <namespace>/<gateway>. Required.
	Cluster string
	// NodeID is node.id. Empty means NodeID(Cluster, <host name>).
	NodeID string
	// XDSAddress is the host:port of the xds service; the client checks
	// that the server's certificate holds the host. Empty means
	// DefaultXDSAddress.
	XDSAddress string
	// CertDir is the absolute path of the folder of the client's
	// certificate: tls.crt and tls.key, the gateway's certificate (package
	// certs), and ca.crt. Empty means plaintext, for an xds service started
	// with GATEWIRE_XDS_INSECURE=true.
	CertDir string
	// RefreshInterval is how often the files are read again; 0 means
	// DefaultRefreshInterval.
	RefreshInterval time.Duration
}

// The gRPC xDS bootstrap (gRFC A27, with A65 for the TLS channel
// credentials), the fields gatewire sets.
type grpcBootstrap struct {
	XDSServers []grpcXDSServer `json:"xds_servers"`
	Node       grpcNode        `json:"node"`
}

type grpcXDSServer struct {
	ServerURI      string            `json:"server_uri"`
	ChannelCreds   []grpcChannelCred `json:"channel_creds"`
	ServerFeatures []string          `json:"server_features"`
}

type grpcChannelCred struct {
	Type   string          `json:"type"`
	Config *fileWatcherCfg `json:"config,omitempty"`
}

// fileWatcherCfg is the config of gRPC's file_watcher certificate provider,
// which the "tls" channel credentials use to read and refresh the files.
type fileWatcherCfg struct {
	CertificateFile   string `json:"certificate_file"`
	PrivateKeyFile    string `json:"private_key_file"`
	CACertificateFile string `json:"ca_certificate_file"`
	RefreshInterval   string `json:"refresh_interval"`
}

type grpcNode struct {
	ID       string         `json:"id"`
	Cluster  string         `json:"cluster"`
	Metadata map[string]any `json:"metadata"`
}

// RenderProxyless renders the xDS bootstrap of a gRPC-Go (or any gRPC)
// proxyless client, as JSON for GRPC_XDS_BOOTSTRAP or
// GRPC_XDS_BOOTSTRAP_CONFIG: one xds server, reached over TLS with the
// "tls" channel credentials, whose file_watcher provider reads the client
// certificate, its key and the CA bundle of CertDir and reads them again
// every RefreshInterval, so rotated certificates are used without a
// restart; the node is a proxyless node of Cluster.
func RenderProxyless(o ProxylessOptions) ([]byte, error) {
	if err := checkCluster(o.Cluster); err != nil {
		return nil, err
	}
	if o.XDSAddress == "" {
		o.XDSAddress = DefaultXDSAddress
	}
	if err := CheckXDSAddress(o.XDSAddress); err != nil {
		return nil, err
	}
	if o.NodeID == "" {
		instance, err := hostname()
		if err != nil {
			return nil, err
		}
		o.NodeID = NodeID(o.Cluster, instance)
	}
	creds := grpcChannelCred{Type: "insecure"}
	if o.CertDir != "" {
		if !path.IsAbs(o.CertDir) {
			return nil, fmt.Errorf("proxyless bootstrap: certificate folder %q is not an absolute path", o.CertDir)
		}
		refresh := o.RefreshInterval
		if refresh == 0 {
			refresh = DefaultRefreshInterval
		}
		if refresh < time.Second {
			return nil, fmt.Errorf("proxyless bootstrap: refresh interval %s is shorter than 1s", refresh)
		}
		creds = grpcChannelCred{Type: "tls", Config: &fileWatcherCfg{
			CertificateFile:   path.Join(o.CertDir, certFile),
			PrivateKeyFile:    path.Join(o.CertDir, keyFile),
			CACertificateFile: path.Join(o.CertDir, caFile),
			RefreshInterval:   fmt.Sprintf("%ds", int64(refresh/time.Second)),
		}}
	}
	b := grpcBootstrap{
		XDSServers: []grpcXDSServer{{ServerURI: o.XDSAddress, ChannelCreds: []grpcChannelCred{creds}, ServerFeatures: []string{"xds_v3"}}},
		Node:       grpcNode{ID: o.NodeID, Cluster: o.Cluster, Metadata: map[string]any{ProxylessMetadata: true}},
	}
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
