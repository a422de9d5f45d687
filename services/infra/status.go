package infra

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/infra/kubemode"
)

// StatusToken is the gateway-namespace and gateway-name token of the status
// entries of the infra service. Kubernetes names never hold '=', so these
// keys never collide with a translator's (nor with the xds service's "=xds").
const StatusToken = "=infra"

// gatewayGroup is the API group of the Gateway kind.
const gatewayGroup = "gateway.networking.k8s.io"

// StatusKey is the key of the infra service's status entry for a Gateway:
// Gateway.<namespace>.<name>.=infra.=infra. Its value is a busv1.Status with
// the Gateway's addresses.
func StatusKey(namespace, name string) string {
	return bus.StatusKey("Gateway", namespace, name, StatusToken, StatusToken)
}

// statusPattern matches every key made by StatusKey.
var statusPattern = bus.StatusKey("Gateway", "*", "*", StatusToken, StatusToken)

// statusWriter keeps the status bucket's infra entries equal to the
// addresses of the Services. Writes that fail are tried again by flush.
type statusWriter struct {
	bus *bus.Bus
	s   *Service

	mu      sync.Mutex
	want    map[string][]string // key → addresses; no key: no entry
	pending map[string]bool     // keys whose entry may differ from want
}

// publishAddresses writes the addresses of the gateways' Services to the
// status bucket until ctx is done.
func (s *Service) publishAddresses(ctx context.Context) {
	w := &statusWriter{bus: s.bus, s: s, want: map[string][]string{}, pending: map[string]bool{}}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		t := time.NewTicker(retryInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				w.flush(ctx)
			}
		}
	})
	report := func(a kubemode.Addresses) { w.set(ctx, a) }
	synced := func() { w.prune(ctx) }
	backoff := rewatchMin
	for ctx.Err() == nil {
		if err := s.kube.WatchAddresses(ctx, report, synced); err != nil {
			s.log.Error("infra address watch failed", "error", err, "retry_in", backoff)
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, rewatchMax)
	}
}

// set records the addresses of one gateway and writes them.
func (w *statusWriter) set(ctx context.Context, a kubemode.Addresses) {
	key := StatusKey(a.Namespace, a.Name)
	addresses := a.Addresses
	if a.Gone || len(addresses) == 0 {
		addresses = nil
	}
	w.mu.Lock()
	if !slices.Equal(w.want[key], addresses) {
		w.pending[key] = true
	}
	if addresses == nil {
		delete(w.want, key)
	} else {
		w.want[key] = addresses
	}
	w.mu.Unlock()
	w.flush(ctx)
}

// prune removes the entries of gateways without addresses: those left by an
// earlier leader for Services that are gone.
func (w *statusWriter) prune(ctx context.Context) {
	keys, err := w.bus.Keys(ctx, bus.Status, statusPattern)
	if err != nil {
		if ctx.Err() == nil {
			w.s.log.Error("infra status keys failed", "error", err)
		}
		return
	}
	w.mu.Lock()
	for _, key := range keys {
		if _, ok := w.want[key]; !ok {
			w.pending[key] = true
		}
	}
	n := len(w.want)
	w.mu.Unlock()
	w.flush(ctx)
	w.s.log.Info("infra addresses synced", "gateways", n)
}

// flush writes every pending entry; failures stay pending.
func (w *statusWriter) flush(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key := range w.pending {
		if err := w.write(ctx, key, w.want[key]); err != nil {
			w.s.log.Warn("infra status write failed", "key", key, "error", err, "retry_in", retryInterval)
			continue
		}
		delete(w.pending, key)
	}
}

// write puts the status entry of key, or deletes it without addresses.
func (w *statusWriter) write(ctx context.Context, key string, addresses []string) error {
	if len(addresses) == 0 {
		return w.bus.Delete(ctx, bus.Status, key)
	}
	_, ns, name, _, _, err := bus.ParseStatusKey(key)
	if err != nil {
		return err
	}
	gw := &busv1.ObjectRef{Group: gatewayGroup, Kind: "Gateway", Namespace: ns, Name: name}
	_, err = w.bus.Put(ctx, bus.Status, key, &busv1.Status{Object: gw, Gateway: gw, Addresses: addresses})
	if err == nil {
		w.s.log.Info("infra gateway addresses written", "gateway", ns+"/"+name, "addresses", addresses)
	}
	return err
}
