package kube

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/gatewire/gatewire/services/infra/kubemode"
)

// Addresses are the addresses of one gateway's Service.
type Addresses = kubemode.Addresses

// WatchAddresses follows the Services of this installation until ctx is
// done. It calls report for every Service it finds, then synced once, then
// report for every change; all calls come from the goroutine of
// WatchAddresses, in that order. A Service that is not where Apply would
// put it (about to be pruned) is ignored. The watch reconnects on its own.
func (p *Provisioner) WatchAddresses(ctx context.Context, report func(Addresses), synced func()) error {
	inf := coreinformers.NewFilteredServiceInformer(p.client, p.opts.Namespace, 0, cache.Indexers{},
		func(o *metav1.ListOptions) { o.LabelSelector = ownedSelector(p.opts.System) })
	events := make(chan Addresses)
	send := func(obj any, gone bool) {
		a, ok := p.addressesOf(obj, gone)
		if !ok {
			return
		}
		select {
		case events <- a:
		case <-ctx.Done():
		}
	}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { send(obj, false) },
		UpdateFunc: func(_, obj any) { send(obj, false) },
		DeleteFunc: func(obj any) { send(obj, true) },
	})
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { inf.RunWithContext(ctx) })
	// The handler hands every event over before it returns, so once the
	// registration has synced every initial Service has been reported.
	initial := make(chan struct{})
	wg.Go(func() {
		if cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
			close(initial)
		}
	})
	for {
		select {
		case <-ctx.Done():
			return nil
		case a := <-events:
			report(a)
		case <-initial:
			initial = nil
			synced()
		}
	}
}

// addressesOf reads the gateway and addresses of a Service event.
func (p *Provisioner) addressesOf(obj any, gone bool) (Addresses, bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return Addresses{}, false
	}
	ns, name, err := gatewayOf(svc.Annotations)
	if err != nil || !p.placed(svc.ObjectMeta, ns, name) {
		return Addresses{}, false
	}
	a := Addresses{Namespace: ns, Name: name, Gone: gone}
	if !gone {
		a.Addresses = serviceAddresses(svc)
	}
	return a, true
}

// serviceAddresses are the ingress IPs and host names of a load balancer, or
// else the cluster IPs.
func serviceAddresses(svc *corev1.Service) []string {
	var out []string
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			out = append(out, in.IP)
		}
		if in.Hostname != "" {
			out = append(out, in.Hostname)
		}
	}
	if len(out) > 0 {
		return out
	}
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 && svc.Spec.ClusterIP != "" {
		ips = []string{svc.Spec.ClusterIP}
	}
	for _, ip := range ips {
		if ip != "" && ip != corev1.ClusterIPNone {
			out = append(out, ip)
		}
	}
	return out
}
