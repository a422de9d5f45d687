package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/infra/bootstrap"
	"github.com/gatewire/gatewire/services/infra/kubemode"
)

const (
	// configDir is where the ConfigMap is mounted in the Envoy container.
	configDir = kubemode.ConfigDir
	// nonRootID is the uid and gid Envoy runs as: "nonroot" of the distroless
	// images, given as a number so that runAsNonRoot can be checked.
	nonRootID = 65532
	// drainSeconds is how long a stopping pod keeps serving its connections.
	drainSeconds = 15
)

// gatewayObjects are the four objects of one gateway, ready to apply.
type gatewayObjects struct {
	serviceAccount *corev1ac.ServiceAccountApplyConfiguration
	configMap      *corev1ac.ConfigMapApplyConfiguration
	deployment     *appsv1ac.DeploymentApplyConfiguration
	service        *corev1ac.ServiceApplyConfiguration // nil when the proxy has no port
	meta           gatewayMeta
}

// gatewayMeta is what every object of a gateway shares.
type gatewayMeta struct {
	namespace, name string // the Gateway
	objNamespace    string
	objName         string
	cluster         string // node.cluster, <namespace>/<name>
	labels          map[string]string
	annotations     map[string]string                          // the proxy's and AnnotationGateway
	userAnnotations map[string]string                          // the proxy's alone, for the pods
	owner           *metav1ac.OwnerReferenceApplyConfiguration // nil: none
}

// metaOf places the objects of the gateway of proxy.
func (p *Provisioner) metaOf(proxy *busv1.Proxy) gatewayMeta {
	ns, name := proxy.GetNamespace(), proxy.GetName()
	m := gatewayMeta{
		namespace:    ns,
		name:         name,
		objNamespace: p.objectNamespace(ns),
		objName:      ObjectName(ns, name, p.opts.Namespace != ""),
		cluster:      bootstrap.NodeCluster(ns, name),
		labels:       withOurs(proxy.GetLabels(), objectLabels(p.opts.System, ns, name)),
	}
	m.annotations = withOurs(proxy.GetAnnotations(), map[string]string{AnnotationGateway: m.cluster})
	m.userAnnotations = proxy.GetAnnotations()
	// Owner references cannot cross namespaces; without a uid (a file
	// provider) there is no Gateway object to own them.
	if uid := proxy.GetGatewayUid(); uid != "" && m.objNamespace == ns {
		m.owner = metav1ac.OwnerReference().
			WithAPIVersion("gateway.networking.k8s.io/v1").
			WithKind("Gateway").
			WithName(name).
			WithUID(types.UID(uid)).
			WithController(true)
	}
	return m
}

// objectMeta sets the name, namespace, labels, annotation and owner of an
// object.
type objectMeta[T any] interface {
	WithLabels(map[string]string) T
	WithAnnotations(map[string]string) T
	WithOwnerReferences(...*metav1ac.OwnerReferenceApplyConfiguration) T
}

func withMeta[T objectMeta[T]](obj T, m gatewayMeta) T {
	obj = obj.WithLabels(m.labels).WithAnnotations(m.annotations)
	if m.owner != nil {
		obj = obj.WithOwnerReferences(m.owner)
	}
	return obj
}

// objects renders the four objects of the gateway of proxy.
func (p *Provisioner) objects(proxy *busv1.Proxy) (*gatewayObjects, error) {
	if err := checkMetadata(proxy); err != nil {
		return nil, err
	}
	m := p.metaOf(proxy)
	ports, err := servicePorts(proxy.GetPorts(), p.opts.AdminPort, p.opts.ReadinessPort)
	if err != nil {
		return nil, err
	}
	serviceType := proxy.GetServiceType()
	if serviceType == "" {
		serviceType = p.opts.ServiceType
	}
	if err := kubemode.CheckServiceType(serviceType); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	bs, err := p.bootstrap(m.cluster)
	if err != nil {
		return nil, err
	}
	data, err := p.sdsData()
	if err != nil {
		return nil, err
	}
	if data == nil {
		data = map[string]string{}
	}
	data[BootstrapKey] = string(bs)
	o := &gatewayObjects{
		serviceAccount: withMeta(corev1ac.ServiceAccount(m.objName, m.objNamespace), m).
			WithAutomountServiceAccountToken(false),
		configMap:  withMeta(corev1ac.ConfigMap(m.objName, m.objNamespace), m).WithData(data),
		deployment: p.deployment(proxy, m, ports, bs),
		meta:       m,
	}
	if len(ports) > 0 {
		o.service = service(m, ports, corev1.ServiceType(serviceType))
	}
	return o, nil
}

// bootstrap renders the bootstrap of every Envoy of a gateway. node.id is a
// placeholder: each pod sets its own with --service-node.
func (p *Provisioner) bootstrap(cluster string) ([]byte, error) {
	return kubemode.Bootstrap(p.opts, cluster, p.bootstrapTLS())
}

func service(m gatewayMeta, ports []servicePort, t corev1.ServiceType) *corev1ac.ServiceApplyConfiguration {
	spec := corev1ac.ServiceSpec().
		WithType(t).
		WithSelector(selectorLabels(m.namespace, m.name))
	for _, sp := range ports {
		spec = spec.WithPorts(corev1ac.ServicePort().
			WithName(sp.name).
			WithProtocol(sp.protocol).
			WithPort(sp.port).
			WithTargetPort(intstr.FromInt32(sp.target)))
	}
	return withMeta(corev1ac.Service(m.objName, m.objNamespace), m).WithSpec(spec)
}

func (p *Provisioner) deployment(proxy *busv1.Proxy, m gatewayMeta, ports []servicePort, bs []byte) *appsv1ac.DeploymentApplyConfiguration {
	sum := sha256.Sum256(bs)
	certVols, _ := p.certVolumes(m.objName)
	pod := corev1ac.PodTemplateSpec().
		WithLabels(m.labels).
		WithAnnotations(withOurs(m.userAnnotations, map[string]string{AnnotationBootstrapHash: hex.EncodeToString(sum[:])[:16]})).
		WithSpec(corev1ac.PodSpec().
			WithServiceAccountName(m.objName).
			WithAutomountServiceAccountToken(false).
			WithTerminationGracePeriodSeconds(drainSeconds+15).
			WithSecurityContext(corev1ac.PodSecurityContext().
				WithRunAsNonRoot(true).
				WithRunAsUser(nonRootID).
				WithRunAsGroup(nonRootID).
				// The client certificate's Secret is mounted 0440 for this
				// group.
				WithFSGroup(nonRootID).
				WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
			WithContainers(p.container(proxy, m, ports)).
			WithVolumes(
				corev1ac.Volume().WithName("bootstrap").
					WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(m.objName)),
				corev1ac.Volume().WithName("tmp").
					WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
			).
			WithVolumes(certVols...))
	spec := appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(selectorLabels(m.namespace, m.name))).
		WithTemplate(pod)
	replicas := proxy.GetReplicas()
	if replicas == 0 {
		replicas = p.opts.Replicas
	}
	// With no replica count the field is left to the cluster: 1 on create,
	// then whatever an autoscaler sets.
	if replicas > 0 {
		spec = spec.WithReplicas(replicas)
	}
	return withMeta(appsv1ac.Deployment(m.objName, m.objNamespace), m).WithSpec(spec)
}

func (p *Provisioner) container(proxy *busv1.Proxy, m gatewayMeta, ports []servicePort) *corev1ac.ContainerApplyConfiguration {
	image := proxy.GetImage()
	if image == "" {
		image = p.opts.Image
	}
	c := corev1ac.Container().
		WithName("envoy").
		WithImage(image).
		WithArgs(
			"--config-path", configDir+"/"+BootstrapKey,
			"--service-cluster", m.cluster,
			// Kubernetes expands $(POD_NAME) from the env below.
			"--service-node", bootstrap.NodeID(m.cluster, "$(POD_NAME)"),
			"--drain-time-s", fmt.Sprint(drainSeconds),
		).
		WithEnv(corev1ac.EnvVar().WithName("POD_NAME").WithValueFrom(
			corev1ac.EnvVarSource().WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath("metadata.name")))).
		WithPorts(containerPorts(ports, p.opts.ReadinessPort)...).
		WithReadinessProbe(corev1ac.Probe().
			WithHTTPGet(corev1ac.HTTPGetAction().
				WithPath(bootstrap.ReadyPath).
				WithPort(intstr.FromString(readinessPortName))).
			WithPeriodSeconds(5)).
		WithResources(corev1ac.ResourceRequirements().WithRequests(corev1.ResourceList{
			corev1.ResourceCPU:    p.opts.CPURequest,
			corev1.ResourceMemory: p.opts.MemoryRequest,
		})).
		WithSecurityContext(corev1ac.SecurityContext().
			WithAllowPrivilegeEscalation(false).
			WithReadOnlyRootFilesystem(true).
			WithCapabilities(corev1ac.Capabilities().WithDrop("ALL"))).
		WithVolumeMounts(
			corev1ac.VolumeMount().WithName("bootstrap").WithMountPath(configDir).WithReadOnly(true),
			corev1ac.VolumeMount().WithName("tmp").WithMountPath("/tmp"),
		)
	if _, mounts := p.certVolumes(m.objName); len(mounts) > 0 {
		c = c.WithVolumeMounts(mounts...)
	}
	return c
}

// containerPorts are the ports Envoy binds: one per container port and
// protocol (two Service ports may share one), and the readiness port.
func containerPorts(ports []servicePort, readiness uint32) []*corev1ac.ContainerPortApplyConfiguration {
	var out []*corev1ac.ContainerPortApplyConfiguration
	seen := map[string]bool{}
	for _, sp := range ports {
		key := fmt.Sprintf("%s-%d", sp.protocol, sp.target)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, corev1ac.ContainerPort().
			WithName(sp.name).
			WithProtocol(sp.protocol).
			WithContainerPort(sp.target))
	}
	return append(out, corev1ac.ContainerPort().
		WithName(readinessPortName).
		WithProtocol(corev1.ProtocolTCP).
		WithContainerPort(int32(readiness)))
}
