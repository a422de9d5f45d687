// Package certgen writes, into Kubernetes Secrets, what gatewire's pods
// need before any of them can start: the CA, the certificates of the xds
// server and of the NATS cluster, and the NATS users. It is `gatewire
// certgen`, and `infra certgen` in the infra image, which deploy/k8s runs
// as a Job before the services start, as Envoy Gateway runs its certgen.
//
// Why a Job rather than the infra service alone: the services connect to
// NATS as their own users, and the NATS servers need those users (and
// their TLS certificate) before they start, so they cannot come from a
// service that itself needs NATS. The infra service then renews what it
// issues from the same CA (the xds server's certificate and every
// gateway's); certgen renews the NATS certificate when it is run again.
//
// # Secrets, in the namespace of gatewire
//
//	gatewire-ca                 kubernetes.io/tls  the CA (tls.crt, tls.key, ca.crt); created once, never replaced
//	gatewire-xds-tls            kubernetes.io/tls  the xds server's certificate, renewed by infra
//	gatewire-nats-tls           kubernetes.io/tls  the NATS servers' certificate, for clients and routes
//	gatewire-nats-auth          Opaque             auth.conf: the accounts block of nats.conf (public keys only)
//	gatewire-nats-<role>        Opaque             user.nk: the nkey seed of one role (provider, translator, xds, infra, reader)
//
// Every run is idempotent: it keeps the CA and the seeds it finds, renews
// certificates that are due or name something else, and rewrites auth.conf
// from the seeds. A CA brought from outside (cert-manager) in gatewire-ca
// is used as it is.
package certgen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/certs/kubesecret"
	"github.com/gatewire/gatewire/pkg/natsauth"
)

// The Secrets certgen writes.
const (
	CASecret       = "gatewire-ca"
	XDSTLSSecret   = "gatewire-xds-tls"
	NATSTLSSecret  = "gatewire-nats-tls"
	NATSAuthSecret = "gatewire-nats-auth"
	// NATSUserPrefix starts the Secret of a role's seed: gatewire-nats-<role>.
	NATSUserPrefix = "gatewire-nats-"
	// SeedKey and AuthKey are the keys of those Secrets.
	SeedKey = "user.nk"
	AuthKey = "auth.conf"
	// fieldOwner is the field manager of every write.
	fieldOwner = "gatewire-certgen"
)

// Options say what to write.
type Options struct {
	// Namespace holds the Secrets (gatewire-system). Required.
	Namespace string
	// System is the installation name; empty means "gatewire".
	System string
	// TrustDomain of the SPIFFE IDs; empty means certs.DefaultTrustDomain.
	TrustDomain string
	// XDSNames and NATSNames are the DNS names of the xds Service and of
	// the NATS servers; empty means those of deploy/k8s in Namespace.
	XDSNames, NATSNames []string
	// Lifetime of the xds server's certificate (0: certs.DefaultLifetime)
	// and NATSLifetime of the NATS servers' (0: a year: nats-server reads
	// it at start and on reload only).
	Lifetime, NATSLifetime time.Duration
}

func (o *Options) defaults() error {
	if o.Namespace == "" {
		return errors.New("certgen: no namespace")
	}
	if o.System == "" {
		o.System = "gatewire"
	}
	if err := natsauth.CheckSystem(o.System); err != nil {
		return err
	}
	if o.TrustDomain == "" {
		o.TrustDomain = certs.DefaultTrustDomain
	}
	if len(o.XDSNames) == 0 {
		o.XDSNames = serviceNames("gatewire-xds", o.Namespace)
	}
	if len(o.NATSNames) == 0 {
		// localhost: gatewire tap through kubectl port-forward.
		o.NATSNames = append(append(serviceNames("nats", o.Namespace), serviceNames("*.nats-headless", o.Namespace)...), "localhost")
	}
	if o.NATSLifetime == 0 {
		o.NATSLifetime = 365 * 24 * time.Hour
	}
	return nil
}

// serviceNames are the DNS names of a Service name in namespace.
func serviceNames(name, namespace string) []string {
	return []string{name, name + "." + namespace, name + "." + namespace + ".svc", name + "." + namespace + ".svc.cluster.local"}
}

// Run writes the Secrets of the package doc with c.
func Run(ctx context.Context, c client.Client, o Options, log *slog.Logger) error {
	if err := o.defaults(); err != nil {
		return err
	}
	now := time.Now()
	store := func(name string, createOnly bool) kubesecret.Store {
		return kubesecret.Store{Client: c, Namespace: o.Namespace, Name: name, FieldOwner: fieldOwner, CreateOnly: createOnly,
			Labels: map[string]string{"app.kubernetes.io/part-of": "gatewire", "app.kubernetes.io/managed-by": fieldOwner}}
	}
	ca, created, err := certs.EnsureCA(ctx, store(CASecret, true), "gatewire CA", 0, now)
	if err != nil {
		return err
	}
	log.Info("CA ready", "secret", CASecret, "created", created)
	for _, leaf := range []struct {
		secret string
		req    certs.Request
	}{
		{XDSTLSSecret, certs.XDSServerRequest(o.TrustDomain, o.XDSNames, o.Lifetime)},
		{NATSTLSSecret, certs.ServiceRequest(certs.ServiceID{TrustDomain: o.TrustDomain, Name: "nats"}, certs.ServerAuth|certs.ClientAuth, o.NATSNames, o.NATSLifetime)},
	} {
		r, err := certs.Ensure(ctx, store(leaf.secret, false), ca, leaf.req, now)
		if err != nil {
			return err
		}
		log.Info("certificate ready", "secret", leaf.secret, "issued", r.Issued, "reason", r.Reason, "renew_at", r.RenewAt.UTC().Format(time.RFC3339))
	}
	return natsUsers(ctx, c, o)
}

// natsUsers keeps a seed Secret per role, and writes auth.conf from them.
func natsUsers(ctx context.Context, c client.Client, o Options) error {
	var users []natsauth.User
	for _, role := range natsauth.Roles {
		u, err := ensureUser(ctx, c, o.Namespace, role)
		if err != nil {
			return err
		}
		users = append(users, u)
	}
	auth, err := natsauth.AuthConfig(o.System, users)
	if err != nil {
		return err
	}
	secret := corev1ac.Secret(NATSAuthSecret, o.Namespace).WithType(corev1.SecretTypeOpaque).
		WithLabels(map[string]string{"app.kubernetes.io/part-of": "gatewire", "app.kubernetes.io/name": "nats"}).
		WithData(map[string][]byte{AuthKey: []byte(auth)})
	if err := c.Apply(ctx, secret, client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply Secret %s/%s: %w", o.Namespace, NATSAuthSecret, err)
	}
	return nil
}

// ensureUser returns the user of role whose seed its Secret holds,
// creating the Secret with a new user when there is none. When another
// run creates it first, its user wins.
func ensureUser(ctx context.Context, c client.Client, namespace string, role natsauth.Role) (natsauth.User, error) {
	for range 2 {
		seed, err := readSeed(ctx, c, namespace, role)
		if err != nil {
			return natsauth.User{}, err
		}
		if seed != nil {
			return natsauth.UserFromSeed(role, seed)
		}
		u, err := natsauth.NewUser(role)
		if err != nil {
			return u, err
		}
		created, err := createSeed(ctx, c, namespace, u)
		if err != nil || created {
			return u, err
		}
	}
	return natsauth.User{}, fmt.Errorf("Secret %s/%s%s: created and gone", namespace, NATSUserPrefix, role)
}

// readSeed reads the seed of role; nil when its Secret does not exist.
func readSeed(ctx context.Context, c client.Client, namespace string, role natsauth.Role) ([]byte, error) {
	var s corev1.Secret
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: NATSUserPrefix + string(role)}, &s)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	seed, ok := s.Data[SeedKey]
	if !ok {
		return nil, fmt.Errorf("Secret %s/%s has no %s; remove it to make a new user", namespace, s.Name, SeedKey)
	}
	return seed, nil
}

// createSeed creates the Secret of u's seed; false when it exists.
func createSeed(ctx context.Context, c client.Client, namespace string, u natsauth.User) (bool, error) {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: NATSUserPrefix + string(u.Role),
			Labels: map[string]string{"app.kubernetes.io/part-of": "gatewire", "gatewire.dev/nats-role": string(u.Role)}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{SeedKey: u.Seed},
	}
	err := c.Create(ctx, s, client.FieldOwner(fieldOwner))
	if apierrors.IsAlreadyExists(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create Secret %s/%s: %w", namespace, s.Name, err)
	}
	return true, nil
}
