package conformance

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewire/gatewire/services/infra/kube"
)

// suiteNamespacePrefix starts the names of the namespaces of the suite.
const suiteNamespacePrefix = "gateway-conformance-"

// standInNode is the node name the stand-in gives its Pods.
const standInNode = "conformance-stand-in"

// runStandInKubelet stands in, until ctx is done, for what a cluster runs and
// envtest does not: the Deployment controller and the kubelet, for the
// Deployments of the suite's manifests only. Every poll it gives each such
// Deployment its Pods, named <deployment>-<i>, bound to a node and reported
// Running and Ready, which is what the suite's NamespacesMustBeReady waits
// for. Deployments made by gatewire's infra service are left without Pods:
// no Envoy runs here, and nothing may pretend one does. Errors are reported
// to errf and retried at the next poll.
func runStandInKubelet(ctx context.Context, c client.Client, errf func(error)) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := syncPods(ctx, c); err != nil && ctx.Err() == nil {
			errf(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// syncPods gives every Deployment of the suite its ready Pods.
func syncPods(ctx context.Context, c client.Client) error {
	var deps appsv1.DeploymentList
	if err := c.List(ctx, &deps); err != nil {
		return fmt.Errorf("list deployments: %w", err)
	}
	for i := range deps.Items {
		d := &deps.Items[i]
		if !strings.HasPrefix(d.Namespace, suiteNamespacePrefix) || d.Labels[kube.LabelManagedBy] == kube.ManagedBy ||
			d.DeletionTimestamp != nil {
			continue
		}
		replicas := int32(1)
		if d.Spec.Replicas != nil {
			replicas = *d.Spec.Replicas
		}
		for n := range replicas {
			if err := readyPod(ctx, c, d, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// readyPod creates the n-th Pod of d unless it exists, and reports it Ready.
func readyPod(ctx context.Context, c client.Client, d *appsv1.Deployment, n int32) error {
	pod := &corev1.Pod{}
	key := client.ObjectKey{Namespace: d.Namespace, Name: fmt.Sprintf("%s-%d", d.Name, n)}
	err := c.Get(ctx, key, pod)
	switch {
	case apierrors.IsNotFound(err):
		pod = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: key.Namespace, Name: key.Name,
				Labels: d.Spec.Template.Labels, Annotations: d.Spec.Template.Annotations,
			},
			Spec: *d.Spec.Template.Spec.DeepCopy(),
		}
		pod.Spec.NodeName = standInNode
		if err := c.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create pod %s: %w", key, err)
		}
	case err != nil:
		return fmt.Errorf("get pod %s: %w", key, err)
	}
	if pod.Status.Phase == corev1.PodRunning {
		return nil
	}
	now := metav1.Now()
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, StartTime: &now,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
	}
	if err := c.Status().Update(ctx, pod); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("report pod %s ready: %w", key, err)
	}
	return nil
}
