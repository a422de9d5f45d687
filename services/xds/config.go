package xds

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/gatewire/gatewire/pkg/certs"
)

// Config is the configuration of the xds service, loaded from the
// environment with the prefix GATEWIRE_ (see pkg/service).
type Config struct {
	// Address is where the gRPC xDS server listens.
	Address string `envconfig:"XDS_ADDRESS" default:":18000" desc:"host:port of the xDS gRPC server (ADS, state-of-the-world and delta)"`
	// KeepaliveTime is how long a connection may be idle before the server
	// pings the Envoy.
	KeepaliveTime time.Duration `envconfig:"XDS_KEEPALIVE_TIME" default:"30s" desc:"idle time after which the server pings a client"`
	// KeepaliveTimeout is how long the server waits for the answer to a ping
	// before it closes the connection. gRPC also makes it the connection's
	// TCP user timeout: a client whose TCP stack leaves sent data
	// unacknowledged that long (a client too busy to read while it takes
	// in a large configuration, or a full receive buffer) is disconnected,
	// so it is well above what a loaded client needs.
	KeepaliveTimeout time.Duration `envconfig:"XDS_KEEPALIVE_TIMEOUT" default:"20s" desc:"time to wait for a ping answer, or for sent data to be acknowledged, before closing the connection"`
	// KeepaliveMinTime is the shortest ping interval a client may use; a
	// client that pings more often is disconnected.
	KeepaliveMinTime time.Duration `envconfig:"XDS_KEEPALIVE_MIN_TIME" default:"30s" desc:"shortest ping interval a client is allowed"`
	// MaxConcurrentStreams bounds the gRPC streams of one connection. It is
	// high because one Envoy may open a stream per resource type.
	MaxConcurrentStreams uint32 `envconfig:"XDS_MAX_CONCURRENT_STREAMS" default:"1000000" desc:"maximum gRPC streams on one connection"`
	// ShutdownTimeout bounds the graceful stop of the gRPC server when Run's
	// context is done; streams still open then are cut.
	ShutdownTimeout time.Duration `envconfig:"XDS_SHUTDOWN_TIMEOUT" default:"5s" desc:"time allowed for open streams to end on shutdown"`
	// SendTimeout bounds one response's send: a stream whose client does
	// not take a response within it is closed, with a log line and
	// gatewire_xds_send_timeouts_total. Other streams never wait for it.
	SendTimeout time.Duration `envconfig:"XDS_SEND_TIMEOUT" default:"30s" desc:"time a client may take to receive one response before its stream is closed"`
	// MaxRequestBytes bounds one request a client sends; a larger one ends
	// its stream with ResourceExhausted.
	MaxRequestBytes int `envconfig:"XDS_MAX_REQUEST_BYTES" default:"4194304" desc:"largest xDS request accepted, in bytes"`
	// ReplicaID names this replica in the key of the gateway status entries
	// it writes when a client rejects a configuration. Empty means the host
	// name. Replicas must have distinct ids.
	ReplicaID string `envconfig:"XDS_REPLICA_ID" default:"" desc:"name of this replica in the gateway status entries it writes (letters, digits, '-' and '.'); empty for the host name"`
	// TLS is how clients are authenticated: mTLS unless Insecure.
	TLS
}

// TLS is the part of Config about mTLS: the server's certificate and key,
// and the CA bundle every client's certificate must chain to. The files
// are read again when they change, so a renewed certificate is served to
// new connections without dropping open ones.
type TLS struct {
	// XDSTransport is what infra shares: XDSInsecure serves plaintext to
	// any client, unauthenticated; TrustDomain is the trust domain of the
	// gateway SPIFFE IDs clients' certificates must carry.
	certs.XDSTransport
	// CertFile and KeyFile are the server's certificate (chain) and key,
	// PEM; CAFile the CA bundle client certificates are verified with.
	CertFile string `envconfig:"XDS_TLS_CERT" default:"" desc:"PEM file of the xds server's certificate (chain); required unless GATEWIRE_XDS_INSECURE=true; reloaded when it changes"`
	KeyFile  string `envconfig:"XDS_TLS_KEY" default:"" desc:"PEM file of the xds server's private key; required unless GATEWIRE_XDS_INSECURE=true"`
	CAFile   string `envconfig:"XDS_TLS_CA" default:"" desc:"PEM file of the CA bundle that every client certificate must chain to (gatewire's CA); required unless GATEWIRE_XDS_INSECURE=true"`
}

// validate reports the first bad TLS value, naming its variable: a bad
// trust domain, or one of the three files given without the others. It
// does not read the files, and leaves them all empty to [New], which
// refuses that unless XDSInsecure: a program that issues the files itself
// (gatewire standalone) fills them in after loading the configuration.
func (t TLS) validate() error {
	if err := t.XDSTransport.Validate(); err != nil {
		return err
	}
	if t.XDSInsecure || t.CertFile == "" && t.KeyFile == "" && t.CAFile == "" {
		return nil
	}
	return t.required()
}

// required reports the first TLS file not given.
func (t TLS) required() error {
	for _, f := range []struct{ name, path string }{
		{"GATEWIRE_XDS_TLS_CERT", t.CertFile},
		{"GATEWIRE_XDS_TLS_KEY", t.KeyFile},
		{"GATEWIRE_XDS_TLS_CA", t.CAFile},
	} {
		if f.path == "" {
			return fmt.Errorf("%s: required: the xds service serves mTLS (set GATEWIRE_XDS_TLS_CERT, GATEWIRE_XDS_TLS_KEY and GATEWIRE_XDS_TLS_CA), or GATEWIRE_XDS_INSECURE=true for plaintext in development", f.name)
		}
	}
	return nil
}

// DefaultConfig is the configuration with every default applied.
func DefaultConfig() Config {
	return Config{
		Address:              ":18000",
		KeepaliveTime:        30 * time.Second,
		KeepaliveTimeout:     20 * time.Second,
		KeepaliveMinTime:     30 * time.Second,
		MaxConcurrentStreams: 1000000,
		ShutdownTimeout:      5 * time.Second,
		SendTimeout:          30 * time.Second,
		MaxRequestBytes:      4 << 20,
	}
}

// Validate reports the first bad value, naming its environment variable.
func (c Config) Validate() error {
	if err := validateAddress(c.Address); err != nil {
		return fmt.Errorf("GATEWIRE_XDS_ADDRESS: %w", err)
	}
	durations := []struct {
		name string
		d    time.Duration
	}{
		{"GATEWIRE_XDS_KEEPALIVE_TIME", c.KeepaliveTime},
		{"GATEWIRE_XDS_KEEPALIVE_TIMEOUT", c.KeepaliveTimeout},
		{"GATEWIRE_XDS_KEEPALIVE_MIN_TIME", c.KeepaliveMinTime},
		{"GATEWIRE_XDS_SHUTDOWN_TIMEOUT", c.ShutdownTimeout},
		{"GATEWIRE_XDS_SEND_TIMEOUT", c.SendTimeout},
	}
	for _, d := range durations {
		if d.d <= 0 {
			return fmt.Errorf("%s: %s is not a positive duration", d.name, d.d)
		}
	}
	if c.MaxConcurrentStreams == 0 {
		return errors.New("GATEWIRE_XDS_MAX_CONCURRENT_STREAMS: must be at least 1")
	}
	if c.MaxRequestBytes < 1024 {
		return fmt.Errorf("GATEWIRE_XDS_MAX_REQUEST_BYTES: %d is less than 1024", c.MaxRequestBytes)
	}
	if err := c.TLS.validate(); err != nil {
		return err
	}
	if c.ReplicaID != "" {
		if err := validateReplicaID(c.ReplicaID); err != nil {
			return fmt.Errorf("GATEWIRE_XDS_REPLICA_ID: %w", err)
		}
	}
	return nil
}

// replica is the replica id: GATEWIRE_XDS_REPLICA_ID, or the host name.
func (c Config) replica() (string, error) {
	if c.ReplicaID != "" {
		return c.ReplicaID, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("GATEWIRE_XDS_REPLICA_ID is empty and the host name is unknown: %w", err)
	}
	if err := validateReplicaID(host); err != nil {
		return "", fmt.Errorf("GATEWIRE_XDS_REPLICA_ID is empty and the host name cannot be used instead; set it: %w", err)
	}
	return host, nil
}

// validateReplicaID accepts what a host name holds, which is also what a
// status key token may hold.
func validateReplicaID(id string) error {
	if len(id) > 253 {
		return fmt.Errorf("%q is longer than 253 characters", id)
	}
	for _, r := range id {
		ok := r == '-' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
		if !ok {
			return fmt.Errorf("%q holds %q; use letters, digits, '-' and '.'", id, r)
		}
	}
	return nil
}

func validateAddress(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port: %w", addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%q: port %q is not a number from 0 to 65535", addr, port)
	}
	return nil
}
