package kube

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/gatewire/gatewire/services/infra/kubemode"
)

// Election names the Lease that elects one active replica and says how it
// is held (kubemode.Election).
type Election = kubemode.Election

func withDefaults(e Election) Election {
	if e.LeaseDuration == 0 {
		e.LeaseDuration = 15 * time.Second
	}
	if e.RenewDeadline == 0 {
		e.RenewDeadline = 10 * time.Second
	}
	if e.RetryPeriod == 0 {
		e.RetryPeriod = 2 * time.Second
	}
	return e
}

// Elect campaigns for the Lease of e until ctx is done. Each time this
// replica holds it, lead runs with a context that ends when the lease is lost
// or ctx is done; Elect waits for lead to return before it campaigns again,
// so two leads of one replica never overlap. onLeader is called with the
// identity of every new leader seen, this replica's included. When ctx ends,
// a held lease is released so another replica takes over at once.
func Elect(ctx context.Context, client kubernetes.Interface, e Election, log *slog.Logger,
	lead func(ctx context.Context), onLeader func(identity string)) error {
	e = withDefaults(e)
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// client-go logs through klog; send it to log.
	ctx = klog.NewContext(ctx, logr.FromSlogHandler(log.Handler()))
	for ctx.Err() == nil {
		if err := elect(ctx, client, e, lead, onLeader); err != nil {
			return err
		}
		if ctx.Err() == nil {
			log.Warn("leader lease lost", "lease", e.Namespace+"/"+e.Name, "identity", e.Identity)
		}
	}
	return nil
}

// elect runs one leader elector until it stops leading or ctx is done.
func elect(ctx context.Context, client kubernetes.Interface, e Election,
	lead func(ctx context.Context), onLeader func(identity string)) error {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  leaseMeta(e),
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: e.Identity},
	}
	// client-go starts OnStartedLeading in a goroutine of its own; lead runs
	// here instead, so that it has returned when elect returns.
	leading := make(chan context.Context, 1)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            e.Name,
		LeaseDuration:   e.LeaseDuration,
		RenewDeadline:   e.RenewDeadline,
		RetryPeriod:     e.RetryPeriod,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) { leading <- ctx },
			OnStoppedLeading: func() {},
			OnNewLeader:      onLeader,
		},
	})
	if err != nil {
		return fmt.Errorf("kube: leader election on lease %s/%s: %w", e.Namespace, e.Name, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		le.Run(ctx)
	}()
	select {
	case leadCtx := <-leading:
		lead(leadCtx)
	case <-done:
	}
	<-done
	return nil
}

func leaseMeta(e Election) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: e.Namespace, Name: e.Name}
}
