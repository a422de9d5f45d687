// Package kubesecret keeps a bundle of package certs in a Kubernetes Secret
// of type kubernetes.io/tls: the certificate chain under tls.crt, its key
// under tls.key and the CA bundle under ca.crt, the layout cert-manager
// writes, so a CA or certificate cert-manager issues can be used as it is.
//
// It is a package of its own so that package certs, which the xds service
// uses, stays free of Kubernetes clients.
package kubesecret

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewire/gatewire/pkg/certs"
)

// Store keeps a bundle in the Secret Namespace/Name. It implements
// certs.Store. Save applies the Secret server-side as FieldOwner, so saving
// the same bundle again changes nothing and fields of other managers (a
// cert-manager annotation, a user's label) stay.
type Store struct {
	Client          client.Client
	Namespace, Name string
	// FieldOwner is the field manager of Save. Required.
	FieldOwner string
	// Labels and Annotations are set on the Secret by Save.
	Labels, Annotations map[string]string
	// Owner, when not nil, is set as the Secret's owner reference (the
	// Deployment that mounts it, so that the Secret goes with it).
	Owner *metav1ac.OwnerReferenceApplyConfiguration
	// CreateOnly makes Save create the Secret and never change one:
	// certs.ErrExists when it exists. For a CA: two processes that create
	// one at once must not both win.
	CreateOnly bool
}

var _ certs.Store = Store{}

// Load reads the Secret. A missing Secret is certs.ErrNotFound; a Secret
// without some of the keys gives a bundle without them, which certs.Ensure
// replaces and certs.ParseCA refuses. Values larger than certs.MaxPEMSize
// are refused.
func (s Store) Load(ctx context.Context) (*certs.Bundle, error) {
	var secret corev1.Secret
	err := s.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: s.Name}, &secret)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%w: Secret %s/%s does not exist", certs.ErrNotFound, s.Namespace, s.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("get Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	for key, v := range secret.Data {
		if len(v) > certs.MaxPEMSize {
			return nil, fmt.Errorf("Secret %s/%s: %s holds %d bytes, more than %d", s.Namespace, s.Name, key, len(v), certs.MaxPEMSize)
		}
	}
	return &certs.Bundle{
		Cert: secret.Data[corev1.TLSCertKey],
		Key:  secret.Data[corev1.TLSPrivateKeyKey],
		CA:   secret.Data[certs.CAFile],
	}, nil
}

// Save applies the Secret with the bundle.
func (s Store) Save(ctx context.Context, b *certs.Bundle) error {
	secret := corev1ac.Secret(s.Name, s.Namespace).
		WithType(corev1.SecretTypeTLS).
		WithData(map[string][]byte{
			corev1.TLSCertKey:       b.Cert,
			corev1.TLSPrivateKeyKey: b.Key,
			certs.CAFile:            b.CA,
		})
	if len(s.Labels) > 0 {
		secret = secret.WithLabels(s.Labels)
	}
	if len(s.Annotations) > 0 {
		secret = secret.WithAnnotations(s.Annotations)
	}
	if s.Owner != nil {
		secret = secret.WithOwnerReferences(s.Owner)
	}
	if s.CreateOnly {
		return s.create(ctx, b)
	}
	if err := s.Client.Apply(ctx, secret, client.FieldOwner(s.FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return nil
}

func (s Store) create(ctx context.Context, b *certs.Bundle) error {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, Labels: s.Labels, Annotations: s.Annotations},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: b.Cert, corev1.TLSPrivateKeyKey: b.Key, certs.CAFile: b.CA},
	}
	err := s.Client.Create(ctx, secret, client.FieldOwner(s.FieldOwner))
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("%w: Secret %s/%s", certs.ErrExists, s.Namespace, s.Name)
	}
	if err != nil {
		return fmt.Errorf("create Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return nil
}

func (s Store) String() string { return "Secret " + s.Namespace + "/" + s.Name }
