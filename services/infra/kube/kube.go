// Package kube runs the Envoys of gateways in Kubernetes: per gateway a
// ServiceAccount, a ConfigMap with the Envoy bootstrap, a Deployment of Envoy
// and a Service in front of it, applied with server-side apply.
//
// # Objects
//
// The four objects of gateway <ns>/<gw> share one name, [ObjectName]:
// gatewire-<gw> in the Gateway's namespace (Options.Namespace empty, the
// default), or gatewire-<ns>-<gw>-<hash> in Options.Namespace. They carry
//
//	app.kubernetes.io/managed-by: gatewire
//	app.kubernetes.io/name: gatewire-envoy
//	app.kubernetes.io/component: proxy
//	gateway.gatewire.dev/system: <installation>
//	gateway.gatewire.dev/namespace: <ns>
//	gateway.gatewire.dev/name: <gw>            (see LabelValue for long names)
//	gateway.networking.k8s.io/gateway-name: <gw>  (the same value)
//	annotation gateway.gatewire.dev/gateway: <ns>/<gw>
//
// so `kubectl get all -l gateway.gatewire.dev/name=<gw>` finds them from the
// Gateway, as does the Gateway API's well-known label (GEP-1762; not in the
// pods' selector, so upgrading from a version without it rolls the pods
// once), and, in the Gateway's namespace with a known Gateway uid, an owner
// reference (controller) to the Gateway, so deleting the Gateway deletes them
// in a cluster with a garbage collector.
//
// The labels and annotations of Proxy (a Gateway's spec.infrastructure) are
// added to every object and to the pods, gatewire's own keys winning; a
// change of them rolls the pods, as any change of the pod template does.
// Keys or values the API server would refuse make the proxy ErrInvalid.
//
//   - ServiceAccount: no API token mounted; Envoy does not call the API.
//   - ConfigMap: bootstrap.yaml, rendered by package bootstrap: node.cluster
//     <ns>/<gw>, the xds service at Options.XDSAddress, admin on
//     127.0.0.1:Options.AdminPort, and a readiness listener on
//     0.0.0.0:Options.ReadinessPort that forwards GET /ready to the admin.
//   - Deployment: one container "envoy" of Proxy.image or Options.Image, run
//     with --config-path /etc/envoy/bootstrap.yaml, --service-cluster <ns>/<gw>
//     and --service-node <ns>/<gw>/$(POD_NAME) (the pod name from the downward
//     API, so each pod has its own node.id); a readiness probe on /ready at the
//     readiness port; uid/gid 65532, non-root, read-only root file system (an
//     emptyDir on /tmp), no privilege escalation, every capability dropped,
//     the runtime's seccomp profile; CPU and memory requests from Options.
//     Replicas are Proxy.replicas, else Options.Replicas; when both are 0 the
//     field is left to the cluster (an autoscaler may own it). The pod
//     template carries a hash of the bootstrap, so a new bootstrap rolls the
//     pods.
//   - Service: type Proxy.service_type, else Options.ServiceType; one port per
//     Proxy port, named <protocol>-<port> and targeting its container port. A
//     proxy without ports has no Service.
//   - Secret (with an issuer, see SetIssuer; every mode but the insecure
//     one): the gateway's client certificate, kubernetes.io/tls (tls.crt,
//     tls.key, ca.crt), owned by the Deployment so that it goes with it,
//     mounted read-only at /etc/gatewire/xds-tls (mode 0440, group 65532).
//     The ConfigMap then also holds certificate.sds.json and
//     trusted-ca.sds.json, the SDS files that point Envoy at those files,
//     and the bootstrap reaches the xds service over mTLS with them. Envoy
//     watches the mounted folder, so a renewed certificate (the issuer
//     applies it again, and the kubelet updates the volume) is used without
//     rolling the pods. infra never reads these Secrets back: after a
//     restart it issues every gateway's certificate anew.
//
// # Writes
//
// Every object is written with server-side apply, field manager
// "gatewire-infra", forcing ownership of the fields it sets: applying the
// same proxy twice changes nothing, and a changed proxy changes only what
// differs. Remove deletes the four objects (in the background: the garbage
// collector removes the ReplicaSets and pods). Prune lists the objects of
// this installation by label and deletes those of gateways no longer wanted,
// and those not where the current options would put them.
//
// # Addresses
//
// WatchAddresses follows the Services of this installation and reports the
// addresses of each gateway: the ingress IPs and host names of a load
// balancer, else the Service's cluster IPs.
//
// A Provisioner's Apply, Remove and Prune are called from one goroutine;
// WatchAddresses may run beside them.
package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/infra/bootstrap"
	"github.com/gatewire/gatewire/services/infra/issuer"
	"github.com/gatewire/gatewire/services/infra/kubemode"
)

// ErrInvalid marks a proxy that cannot be provisioned as it is (a bad port or
// service type): trying again will not help until the proxy changes.
var ErrInvalid = kubemode.ErrInvalid

// Options configure a Provisioner (kubemode.Options).
type Options = kubemode.Options

func check(o Options) error {
	if errs := validation.IsValidLabelValue(o.System); o.System == "" || len(errs) > 0 {
		return fmt.Errorf("kube: system %q is not a label value: %v", o.System, errs)
	}
	if o.Namespace != "" {
		if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
			return fmt.Errorf("kube: namespace %q: %v", o.Namespace, errs)
		}
	}
	if err := bootstrap.CheckXDSAddress(o.XDSAddress); err != nil {
		return fmt.Errorf("kube: %w", err)
	}
	if o.AdminPort == 0 || o.ReadinessPort == 0 || o.AdminPort == o.ReadinessPort {
		return fmt.Errorf("kube: admin port %d and readiness port %d: want two different ports", o.AdminPort, o.ReadinessPort)
	}
	if o.Image == "" {
		return errors.New("kube: no Envoy image")
	}
	if o.Replicas < 0 {
		return fmt.Errorf("kube: replicas %d: want 0 or more", o.Replicas)
	}
	return kubemode.CheckServiceType(o.ServiceType)
}

// Provisioner applies and removes the objects of gateways. See the package
// doc.
type Provisioner struct {
	opts   Options
	client kubernetes.Interface
	ctrl   client.Client // for the certificate Secrets (package kubesecret)
	log    *slog.Logger
	issuer *issuer.Issuer // nil: plaintext bootstraps
}

// New checks opts and returns a Provisioner that talks to the API server of
// cfg. It does not contact the server. A nil log discards logs.
func New(cfg *rest.Config, opts Options, log *slog.Logger) (*Provisioner, error) {
	if err := check(opts); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kube: client: %w", err)
	}
	ctrl, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return nil, fmt.Errorf("kube: client: %w", err)
	}
	return &Provisioner{opts: opts, client: c, ctrl: ctrl, log: log}, nil
}

// Client is the provisioner's client, for leader election.
func (p *Provisioner) Client() kubernetes.Interface { return p.client }

// objectNamespace is the namespace of the objects of a gateway in namespace.
func (p *Provisioner) objectNamespace(namespace string) string {
	if p.opts.Namespace != "" {
		return p.opts.Namespace
	}
	return namespace
}

// Apply creates or updates the objects of the gateway of proxy. An error
// wrapping ErrInvalid says the proxy itself is wrong.
func (p *Provisioner) Apply(ctx context.Context, proxy *busv1.Proxy) error {
	if err := bootstrap.CheckGateway(proxy.GetNamespace(), proxy.GetName()); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	o, err := p.objects(proxy)
	if err != nil {
		return fmt.Errorf("gateway %s/%s: %w", proxy.GetNamespace(), proxy.GetName(), err)
	}
	if err := p.apply(ctx, o); err != nil {
		return fmt.Errorf("gateway %s/%s: %w", proxy.GetNamespace(), proxy.GetName(), err)
	}
	return nil
}

func (p *Provisioner) apply(ctx context.Context, o *gatewayObjects) error {
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	ns, name := *o.deployment.GetNamespace(), *o.deployment.GetName()
	if _, err := p.client.CoreV1().ServiceAccounts(ns).Apply(ctx, o.serviceAccount, opts); err != nil {
		return fmt.Errorf("apply ServiceAccount %s/%s: %w", ns, name, err)
	}
	if _, err := p.client.CoreV1().ConfigMaps(ns).Apply(ctx, o.configMap, opts); err != nil {
		return fmt.Errorf("apply ConfigMap %s/%s: %w", ns, name, err)
	}
	dep, err := p.client.AppsV1().Deployments(ns).Apply(ctx, o.deployment, opts)
	if err != nil {
		return fmt.Errorf("apply Deployment %s/%s: %w", ns, name, err)
	}
	if err := p.applyCertificate(ctx, o.meta, dep); err != nil {
		return err
	}
	if o.service == nil {
		return p.deleteObject(ctx, kindService, ns, name)
	}
	if _, err := p.client.CoreV1().Services(ns).Apply(ctx, o.service, opts); err != nil {
		return fmt.Errorf("apply Service %s/%s: %w", ns, name, err)
	}
	return nil
}

// Remove deletes the objects of a gateway, its Secret included; objects
// already gone are fine.
func (p *Provisioner) Remove(ctx context.Context, namespace, name string) error {
	ns, obj := p.objectNamespace(namespace), ObjectName(namespace, name, p.opts.Namespace != "")
	if p.issuer != nil {
		p.issuer.Forget(namespace, name)
	}
	for _, k := range append(kinds, kindSecret) {
		if err := p.deleteObject(ctx, k, ns, obj); err != nil {
			return fmt.Errorf("gateway %s/%s: %w", namespace, name, err)
		}
	}
	p.log.Info("kubernetes objects removed", "gateway", namespace+"/"+name, "namespace", ns, "name", obj)
	return nil
}

// Close releases nothing: the objects stay, and the client holds no
// goroutines.
func (p *Provisioner) Close() error { return nil }

// ignoreNotFound is nil for a NotFound error.
func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
