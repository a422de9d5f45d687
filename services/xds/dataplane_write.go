package xds

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
)

// retireTimeout bounds the deletion of a stopping replica's entries.
const retireTimeout = 3 * time.Second

// run writes the entries of changed gateways until ctx is done, then
// deletes this replica's entries. First it looks for entries an earlier
// run of this replica id left behind, so that they are deleted too.
func (d *dataPlane) run(ctx context.Context) {
	backoff := minWatchBackoff
	adopted := false
	for ctx.Err() == nil {
		err := d.adopt(ctx, &adopted)
		if err == nil {
			err = d.flush(ctx)
		}
		if err != nil {
			d.log.Warn("gateway status not written", "replica", d.replica, "error", err, "retry", backoff)
			if !sleep(ctx, backoff) {
				break
			}
			backoff = min(2*backoff, maxWatchBackoff)
			continue
		}
		backoff = minWatchBackoff
		select {
		case <-ctx.Done():
		case <-d.kick:
		}
	}
	d.retire()
}

// adopt marks for deletion the entries of this replica id found in the
// bucket, once.
func (d *dataPlane) adopt(ctx context.Context, done *bool) error {
	if *done {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, statusWriteTimeout)
	defer cancel()
	keys, err := d.bus.Keys(ctx, bus.Status, bus.DataPlaneStatusKey("*", "*", d.replica))
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, key := range keys {
		_, ns, name, _, _, err := bus.ParseStatusKey(key)
		if err != nil {
			continue
		}
		gateway := ns + "/" + name
		d.written[gateway] = true
		d.markLocked(gateway)
	}
	*done = true
	return nil
}

// flush writes the entry of every changed gateway; the gateways it could
// not write stay marked.
func (d *dataPlane) flush(ctx context.Context) error {
	d.mu.Lock()
	gateways := slices.Sorted(maps.Keys(d.dirty))
	clear(d.dirty)
	d.mu.Unlock()
	var errs []error
	for _, gateway := range gateways {
		if err := d.write(ctx, gateway); err != nil {
			d.mu.Lock()
			d.dirty[gateway] = true
			d.mu.Unlock()
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// write puts the gateway's entry, or deletes it when the gateway has no
// rejection.
func (d *dataPlane) write(ctx context.Context, gateway string) error {
	key, err := d.key(gateway)
	if err != nil {
		d.log.Error("gateway status not written", "gateway", gateway, "error", err)
		return nil // retrying would not help
	}
	ctx, cancel := context.WithTimeout(ctx, statusWriteTimeout)
	defer cancel()
	st, written := d.plan(gateway)
	if st == nil {
		if !written {
			return nil
		}
		if err := d.bus.Delete(ctx, bus.Status, key); err != nil {
			return fmt.Errorf("delete %s: %w", key, err)
		}
		d.mu.Lock()
		delete(d.written, gateway)
		d.mu.Unlock()
		d.log.Debug("gateway status entry deleted", "gateway", gateway, "key", key)
		return nil
	}
	if _, err := d.bus.Put(ctx, bus.Status, key, st); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	d.log.Debug("gateway status entry written", "gateway", gateway, "key", key)
	return nil
}

// key is this replica's status key of the gateway <namespace>/<name>.
func (d *dataPlane) key(gateway string) (string, error) {
	ns, name, ok := strings.Cut(gateway, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", fmt.Errorf("gateway %q is not <namespace>/<name>", gateway)
	}
	return bus.DataPlaneStatusKey(ns, name, d.replica), nil
}

// retire deletes the entries this replica may have written: once it is
// gone, nothing would clear them.
func (d *dataPlane) retire() {
	d.mu.Lock()
	gateways := slices.Sorted(maps.Keys(d.written))
	d.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), retireTimeout)
	defer cancel()
	for _, gateway := range gateways {
		key, err := d.key(gateway)
		if err != nil {
			continue
		}
		if err := d.bus.Delete(ctx, bus.Status, key); err != nil {
			d.log.Warn("gateway status entry left behind", "gateway", gateway, "key", key, "error", err)
		}
	}
}
