package kube

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/certs/kubesecret"
	"github.com/gatewire/gatewire/services/infra/bootstrap"
	"github.com/gatewire/gatewire/services/infra/issuer"
	"github.com/gatewire/gatewire/services/infra/kubemode"
)

const (
	// CertificateSDSKey and TrustedCASDSKey are the keys of the SDS files
	// in a gateway's ConfigMap, beside the bootstrap.
	CertificateSDSKey = kubemode.CertificateSDSKey
	TrustedCASDSKey   = kubemode.TrustedCASDSKey
	// certDir is where a gateway's Secret (its client certificate) is
	// mounted in the Envoy container. It is not under configDir: a mount
	// inside a ConfigMap volume needs a folder the runtime cannot create.
	certDir = "/etc/gatewire/xds-tls"
	// certVolume is the name of that volume.
	certVolume = "xds-tls"
)

// SetIssuer makes Apply issue the client certificate of each gateway into
// its Secret and write bootstraps that use it; nil keeps bootstraps in
// plaintext (the insecure mode). Call it before the first Apply.
func (p *Provisioner) SetIssuer(i *issuer.Issuer) { p.issuer = i }

// SecretStore is a certificate store in the Secret namespace/name, written
// by this provisioner's field manager.
func (p *Provisioner) SecretStore(namespace, name string, createOnly bool) kubesecret.Store {
	return kubesecret.Store{
		Client: p.ctrl, Namespace: namespace, Name: name, FieldOwner: FieldManager, CreateOnly: createOnly,
		Labels: map[string]string{LabelManagedBy: ManagedBy, LabelSystem: p.opts.System},
	}
}

// bootstrapTLS is the TLS of a gateway's bootstrap, nil without an issuer.
func (p *Provisioner) bootstrapTLS() *bootstrap.TLS {
	if p.issuer == nil {
		return nil
	}
	return kubemode.BootstrapTLS(p.issuer.ServerID())
}

// sdsData is what the ConfigMap holds besides the bootstrap: the SDS
// files, naming the files of the mounted Secret.
func (p *Provisioner) sdsData() (map[string]string, error) {
	if p.issuer == nil {
		return nil, nil
	}
	cert, ca, err := bootstrap.SDSFiles(certDir)
	if err != nil {
		return nil, err
	}
	return map[string]string{CertificateSDSKey: string(cert), TrustedCASDSKey: string(ca)}, nil
}

// certVolumes are the Secret volume and its mount, none without an issuer.
func (p *Provisioner) certVolumes(secret string) ([]*corev1ac.VolumeApplyConfiguration, []*corev1ac.VolumeMountApplyConfiguration) {
	if p.issuer == nil {
		return nil, nil
	}
	return []*corev1ac.VolumeApplyConfiguration{
			corev1ac.Volume().WithName(certVolume).WithSecret(corev1ac.SecretVolumeSource().
				WithSecretName(secret).WithDefaultMode(0o440)),
		}, []*corev1ac.VolumeMountApplyConfiguration{
			corev1ac.VolumeMount().WithName(certVolume).WithMountPath(certDir).WithReadOnly(true),
		}
}

// applyCertificate issues (or keeps) the client certificate of the gateway
// of m and applies its Secret, owned by the Deployment that mounts it, so
// that it goes with it. The Secret is never read back: infra has no right
// to get Secrets outside its own namespace; after a restart it issues anew.
func (p *Provisioner) applyCertificate(ctx context.Context, m gatewayMeta, dep *appsv1.Deployment) error {
	if p.issuer == nil {
		return nil
	}
	store := p.SecretStore(m.objNamespace, m.objName, false)
	store.Labels = m.labels
	store.Annotations = map[string]string{AnnotationGateway: m.cluster}
	store.Owner = metav1ac.OwnerReference().
		WithAPIVersion("apps/v1").WithKind("Deployment").
		WithName(dep.Name).WithUID(dep.UID)
	if err := p.issuer.Gateway(ctx, m.namespace, m.name, certs.Remembered(store)); err != nil {
		return fmt.Errorf("client certificate: %w", err)
	}
	return nil
}
