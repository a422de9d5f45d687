package kube_test

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func objectMeta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name}
}

// gateway returns a Gateway of class with an HTTP listener, and an HTTPS
// listener for each certificate Secret named (namespace "" for the
// Gateway's).
func gateway(ns, name, class string, certs ...gatewayv1.SecretObjectReference) *gatewayv1.Gateway {
	gw := &gatewayv1.Gateway{
		ObjectMeta: objectMeta(ns, name),
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: gatewayv1.ObjectName(class),
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
		},
	}
	if len(certs) > 0 {
		gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{
			Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
			TLS: &gatewayv1.ListenerTLSConfig{Mode: new(gatewayv1.TLSModeTerminate), CertificateRefs: certs},
		})
	}
	return gw
}

// secretRef references the Secret ns/name ("" for the Gateway's namespace).
func secretRef(ns, name string) gatewayv1.SecretObjectReference {
	r := gatewayv1.SecretObjectReference{Name: gatewayv1.ObjectName(name)}
	if ns != "" {
		r.Namespace = new(gatewayv1.Namespace(ns))
	}
	return r
}

func parentRefs(ns string, gateways ...string) []gatewayv1.ParentReference {
	var out []gatewayv1.ParentReference
	for _, gw := range gateways {
		out = append(out, gatewayv1.ParentReference{Namespace: new(gatewayv1.Namespace(ns)), Name: gatewayv1.ObjectName(gw)})
	}
	return out
}

func httpRoute(ns, name string, gateways ...string) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{
		ObjectMeta: objectMeta(ns, name),
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parentRefs(ns, gateways...)},
			Rules:           []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: backendRef("backend")}}}},
		},
	}
}

func backendRef(service string) gatewayv1.BackendRef {
	return gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
		Name: gatewayv1.ObjectName(service), Port: new(gatewayv1.PortNumber(8080)),
	}}
}

func service(ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(ns, name),
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}},
	}
}

func endpointSlice(ns, name, svc string) *discoveryv1.EndpointSlice {
	m := objectMeta(ns, name)
	m.Labels = map[string]string{discoveryv1.LabelServiceName: svc}
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  m,
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.1.2.3"}}},
		Ports:       []discoveryv1.EndpointPort{{Name: new("http"), Port: new(int32(8080))}},
	}
}

func secret(ns, name, value string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: objectMeta(ns, name),
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: []byte(value), corev1.TLSPrivateKeyKey: []byte("key")},
	}
}

func configMap(ns, name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: objectMeta(ns, name), Data: map[string]string{"ca.crt": value}}
}

// grant lets Gateways of namespace from reference the Secret ns/name (every
// Secret of ns when name is "").
func grant(ns, name, from, secretName string) *gatewayv1.ReferenceGrant {
	to := gatewayv1.ReferenceGrantTo{Kind: "Secret"}
	if secretName != "" {
		to.Name = new(gatewayv1.ObjectName(secretName))
	}
	return &gatewayv1.ReferenceGrant{
		ObjectMeta: objectMeta(ns, name),
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "Gateway", Namespace: gatewayv1.Namespace(from)}},
			To:   []gatewayv1.ReferenceGrantTo{to},
		},
	}
}

// backendTLSPolicy validates the Service svc with the CA of ConfigMap ca.
func backendTLSPolicy(ns, name, svc, ca string) *gatewayv1.BackendTLSPolicy {
	return &gatewayv1.BackendTLSPolicy{
		ObjectMeta: objectMeta(ns, name),
		Spec: gatewayv1.BackendTLSPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{
				LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{Kind: "Service", Name: gatewayv1.ObjectName(svc)},
			}},
			Validation: gatewayv1.BackendTLSPolicyValidation{
				CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: gatewayv1.ObjectName(ca)}},
				Hostname:          "backend.example.com",
			},
		},
	}
}

func grpcRoute(ns, name, gw string) *gatewayv1.GRPCRoute {
	return &gatewayv1.GRPCRoute{
		ObjectMeta: objectMeta(ns, name),
		Spec: gatewayv1.GRPCRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parentRefs(ns, gw)},
			Rules:           []gatewayv1.GRPCRouteRule{{BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: backendRef("backend")}}}},
		},
	}
}

func tlsRoute(ns, name, gw string) *gatewayv1.TLSRoute {
	return &gatewayv1.TLSRoute{
		ObjectMeta: objectMeta(ns, name),
		Spec: gatewayv1.TLSRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parentRefs(ns, gw)},
			Hostnames:       []gatewayv1.Hostname{"tls.example.com"},
			Rules:           []gatewayv1.TLSRouteRule{{BackendRefs: []gatewayv1.BackendRef{backendRef("backend")}}},
		},
	}
}

func tcpRoute(ns, name, gw string) *gatewayv1.TCPRoute {
	return &gatewayv1.TCPRoute{
		ObjectMeta: objectMeta(ns, name),
		Spec: gatewayv1.TCPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parentRefs(ns, gw)},
			Rules:           []gatewayv1.TCPRouteRule{{BackendRefs: []gatewayv1.BackendRef{backendRef("backend")}}},
		},
	}
}

func udpRoute(ns, name, gw string) *gatewayv1.UDPRoute {
	return &gatewayv1.UDPRoute{
		ObjectMeta: objectMeta(ns, name),
		Spec: gatewayv1.UDPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parentRefs(ns, gw)},
			Rules:           []gatewayv1.UDPRouteRule{{BackendRefs: []gatewayv1.BackendRef{backendRef("backend")}}},
		},
	}
}
