package bus

import (
	"fmt"
	"strings"
	"time"
)

// Proxies is the bucket of the xDS streams the xds replicas serve, one
// busv1.ProxyStatus per stream, read by `gatewire proxy-status`. It has a
// TTL ([WithProxiesTTL], default 30s): a replica writes each of its
// streams' entries again well within it (every 10s, [ProxiesRefresh]), so
// the entries of a replica that died age out, with the deletion marker
// watchers receive as an [OpDelete] entry.
//
// A bucket rather than a request on a subject: it is level-based as the
// other buckets are (a reader gets every replica's streams at once,
// without knowing how many replicas answer or waiting for the slowest),
// a tap sees it, and a stream's state outlives a restart of the CLI.
const Proxies Bucket = "proxies"

// ProxiesRefresh is how often an xds replica writes the entries of its
// live streams again, a third of the default TTL.
const ProxiesRefresh = 10 * time.Second

const defaultProxiesTTL = 30 * time.Second

// WithProxiesTTL sets how long a stream's entry lives in the proxies
// bucket after its last write (default 30s); it must exceed the replicas'
// refresh interval, [ProxiesRefresh].
func WithProxiesTTL(d time.Duration) Option {
	return func(o *options) error {
		if d <= ProxiesRefresh {
			return fmt.Errorf("bus: proxies ttl %s: want more than the refresh interval %s", d, ProxiesRefresh)
		}
		o.proxiesTTL = d
		return nil
	}
}

// ProxyKey is the key of a stream in the proxies bucket:
// <gateway namespace>.<gateway>.<replica>.<stream>.
func ProxyKey(namespace, gateway, replica, stream string) string {
	return GatewayKey(namespace, gateway) + "." + escape(replica) + "." + escape(stream)
}

// ParseProxyKey splits a key made by [ProxyKey].
func ParseProxyKey(key string) (namespace, gateway, replica, stream string, err error) {
	t := strings.Split(key, ".")
	if len(t) != 4 || t[0] == "" || t[1] == "" || t[2] == "" || t[3] == "" {
		return "", "", "", "", fmt.Errorf("proxy key %q: want <namespace>.<gateway>.<replica>.<stream>", key)
	}
	return unescape(t[0]), unescape(t[1]), unescape(t[2]), unescape(t[3]), nil
}

// ttl is the TTL of a bucket; 0 for none.
func (o *options) ttl(bucket Bucket) time.Duration {
	switch bucket {
	case Members:
		return o.memberTTL
	case Proxies:
		return o.proxiesTTL
	}
	return 0
}
