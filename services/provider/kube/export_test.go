package kube

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SetBeforeStatusUpdate makes p call fn between the read of an object and
// the write of its status. Call it before Run.
func SetBeforeStatusUpdate(p *Provider, fn func(ctx context.Context, obj client.Object)) {
	p.beforeStatusUpdate = fn
}
