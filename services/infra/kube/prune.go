package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// kind is one of the four kinds of objects this package makes.
type kind string

const (
	kindService        kind = "Service"
	kindDeployment     kind = "Deployment"
	kindConfigMap      kind = "ConfigMap"
	kindServiceAccount kind = "ServiceAccount"
	// kindSecret is the gateway's client certificate. Prune does not list
	// Secrets (infra may not read them): a pruned Deployment's Secret goes
	// with it, its owner.
	kindSecret kind = "Secret"
)

// kinds in the order of removal: the Service first, so traffic stops going to
// pods about to go; the ServiceAccount last, as the pods use it.
var kinds = []kind{kindService, kindDeployment, kindConfigMap, kindServiceAccount}

// deleteObject deletes one object, in the background; gone is fine. With a
// uid, only that very object is deleted.
func (p *Provisioner) deleteObject(ctx context.Context, k kind, namespace, name string, uid ...types.UID) error {
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &background}
	if len(uid) > 0 {
		opts.Preconditions = &metav1.Preconditions{UID: &uid[0]}
	}
	var err error
	switch k {
	case kindService:
		err = p.client.CoreV1().Services(namespace).Delete(ctx, name, opts)
	case kindDeployment:
		err = p.client.AppsV1().Deployments(namespace).Delete(ctx, name, opts)
	case kindConfigMap:
		err = p.client.CoreV1().ConfigMaps(namespace).Delete(ctx, name, opts)
	case kindServiceAccount:
		err = p.client.CoreV1().ServiceAccounts(namespace).Delete(ctx, name, opts)
	case kindSecret:
		err = p.client.CoreV1().Secrets(namespace).Delete(ctx, name, opts)
	}
	if err = ignoreNotFound(err); err != nil {
		return fmt.Errorf("delete %s %s/%s: %w", k, namespace, name, err)
	}
	return nil
}

// listed is the metadata of an object found by Prune.
type listed = metav1.ObjectMeta

// list returns the objects of one kind of this installation.
func (p *Provisioner) list(ctx context.Context, k kind) ([]listed, error) {
	opts := metav1.ListOptions{LabelSelector: ownedSelector(p.opts.System)}
	ns := p.opts.Namespace // "" lists every namespace
	var out []listed
	switch k {
	case kindService:
		l, err := p.client.CoreV1().Services(ns).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, l.Items[i].ObjectMeta)
		}
	case kindDeployment:
		l, err := p.client.AppsV1().Deployments(ns).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, l.Items[i].ObjectMeta)
		}
	case kindConfigMap:
		l, err := p.client.CoreV1().ConfigMaps(ns).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, l.Items[i].ObjectMeta)
		}
	case kindServiceAccount:
		l, err := p.client.CoreV1().ServiceAccounts(ns).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, l.Items[i].ObjectMeta)
		}
	}
	return out, nil
}

// Prune deletes the objects of this installation whose gateway keep does not
// want, and those that are not where Apply would put them now (the options
// changed). Objects without a readable gateway annotation are logged and
// left alone. It goes on after a failure and returns the first one.
func (p *Provisioner) Prune(ctx context.Context, keep func(namespace, name string) bool) error {
	var first error
	for _, k := range kinds {
		items, err := p.list(ctx, k)
		if err != nil {
			first = firstError(first, fmt.Errorf("list %ss: %w", k, err))
			continue
		}
		for _, obj := range items {
			if !p.stale(k, obj, keep) {
				continue
			}
			err := p.deleteObject(ctx, k, obj.Namespace, obj.Name, obj.UID)
			if err != nil {
				first = firstError(first, err)
				continue
			}
			p.log.Info("stale kubernetes object removed", "kind", string(k), "namespace", obj.Namespace, "name", obj.Name)
		}
	}
	return first
}

// stale reports whether Prune should delete obj.
func (p *Provisioner) stale(k kind, obj listed, keep func(namespace, name string) bool) bool {
	ns, name, err := gatewayOf(obj.Annotations)
	if err != nil {
		p.log.Warn("kubernetes object of unknown gateway left alone", "kind", string(k),
			"namespace", obj.Namespace, "name", obj.Name, "error", err)
		return false
	}
	if !keep(ns, name) {
		return true
	}
	return !p.placed(obj, ns, name)
}

// placed reports whether obj is where Apply puts the objects of gateway
// ns/name.
func (p *Provisioner) placed(obj listed, ns, name string) bool {
	return obj.Namespace == p.objectNamespace(ns) && obj.Name == ObjectName(ns, name, p.opts.Namespace != "")
}

func firstError(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
