package kube

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

func TestServicePorts(t *testing.T) {
	got, err := servicePorts([]*busv1.ProxyPort{
		{Name: "dns", Protocol: "UDP", Port: 53, ContainerPort: 10053},
		{Name: "https", Port: 443, ContainerPort: 10443},
		{Name: "alt", Protocol: "TCP", Port: 8080},
		{Name: "dns-tcp", Protocol: "TCP", Port: 53, ContainerPort: 10053},
	}, 19000, 19001)
	if err != nil {
		t.Fatal(err)
	}
	want := []servicePort{
		{name: "tcp-53", protocol: corev1.ProtocolTCP, port: 53, target: 10053},
		{name: "udp-53", protocol: corev1.ProtocolUDP, port: 53, target: 10053},
		{name: "tcp-443", protocol: corev1.ProtocolTCP, port: 443, target: 10443},
		{name: "tcp-8080", protocol: corev1.ProtocolTCP, port: 8080, target: 8080},
	}
	if !slices.Equal(got, want) {
		t.Errorf("servicePorts = %+v, want %+v", got, want)
	}
}

func TestServicePortsRejects(t *testing.T) {
	for name, ports := range map[string][]*busv1.ProxyPort{
		"protocol":   {{Protocol: "SCTP", Port: 80}},
		"zero":       {{Port: 0}},
		"too big":    {{Port: 80, ContainerPort: 70000}},
		"twice":      {{Port: 80}, {Protocol: "TCP", Port: 80, ContainerPort: 10080}},
		"admin port": {{Port: 19000}},
	} {
		if _, err := servicePorts(ports, 19000, 19001); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: servicePorts = %v, want ErrInvalid", name, err)
		}
	}
}

func TestServiceAddresses(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.7", ClusterIPs: []string{"10.0.0.7", "fd00::7"}}}
	if got := serviceAddresses(svc); !slices.Equal(got, []string{"10.0.0.7", "fd00::7"}) {
		t.Errorf("cluster IPs: %q", got)
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}, {Hostname: "lb.example"}}
	if got := serviceAddresses(svc); !slices.Equal(got, []string{"203.0.113.7", "lb.example"}) {
		t.Errorf("load balancer: %q", got)
	}
	headless := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone}}
	if got := serviceAddresses(headless); len(got) != 0 {
		t.Errorf("headless: %q", got)
	}
}
