package validate

// cases are the objects of TestObject, with the errors the API server would
// return, sorted by field.
var cases = []struct {
	name string
	in   string
	want []string
}{
	{name: "gateway http with tls", in: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, labels: {"bad label": x}}
spec:
  gatewayClassName: gatewire
  listeners:
  - {name: https, protocol: HTTPS, port: 443, hostname: "*.example.com"}
  - {name: http, protocol: HTTP, port: 80, tls: {certificateRefs: [{name: cert}]}}`, want: []string{
		"metadata.labels: Invalid value: \"bad label\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
		"spec.listeners: Invalid value: tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
	}},
	{name: "gateway bad hostname", in: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web}
spec:
  gatewayClassName: gatewire
  listeners: [{name: http, protocol: HTTP, port: 80, hostname: "-bad"}]`, want: []string{
		"spec.listeners[0].hostname: Invalid value: \"-bad\": spec.listeners[0].hostname in body should match '^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'",
	}},
	{name: "httproute enum and required", in: `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r}
spec:
  parentRefs: [{name: web}]
  rules:
  - matches: [{path: {type: Regex, value: "/x"}}]
    backendRefs: [{name: b}]`, want: []string{
		"spec.rules[0].matches[0].path.type: Unsupported value: \"Regex\": supported values: \"Exact\", \"PathPrefix\", \"RegularExpression\"",
		"<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
	}},
	{name: "httproute v1beta1 ok", in: `
apiVersion: gateway.networking.k8s.io/v1beta1
kind: HTTPRoute
metadata: {name: r}
spec:
  parentRefs: [{name: web}]
  rules: [{backendRefs: [{name: b, port: 80}]}]`},
	{name: "grpcroute", in: `
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: r}
spec:
  parentRefs: [{name: web}]
  rules: [{matches: [{method: {type: Exact}}], backendRefs: [{name: b, port: 80}]}]`, want: []string{
		"spec.rules[0].matches[0].method: Invalid value: One or both of 'service' or 'method' must be specified",
	}},
	{name: "gatewayclass", in: `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gw, namespace: ignored}
spec: {controllerName: "not a controller"}`, want: []string{
		"spec.controllerName: Invalid value: \"not a controller\": spec.controllerName in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9\\/\\-._~%!$&'()*+,;=:]+$'",
	}},
	{name: "referencegrant", in: `
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: g}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: apps}]
  to: [{group: "", kind: Service}]`},
	{name: "service", in: `
apiVersion: v1
kind: Service
metadata: {name: 1svc}
spec:
  type: Bogus
  clusterIP: 10.0.0.300
  selector: {"a b": c}
  ports:
  - {port: 70000, protocol: HTTP, targetPort: "http_x"}
  - {name: web, port: 80, appProtocol: "a b"}
  - {name: web, port: 81, targetPort: 0}`, want: []string{
		"metadata.name: Invalid value: \"1svc\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
		"spec.clusterIP: Invalid value: \"10.0.0.300\": must be a valid IP address or \"None\"",
		"spec.ports[0].name: Required value",
		"spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
		"spec.ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
		"spec.ports[0].targetPort: Invalid value: \"http_x\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
		"spec.ports[1].appProtocol: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
		"spec.ports[2].name: Duplicate value: \"web\"",
		"spec.selector: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
		"spec.type: Unsupported value: \"Bogus\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"",
	}},
	{name: "service externalname", in: `
apiVersion: v1
kind: Service
metadata: {name: ext}
spec: {type: ExternalName}`, want: []string{
		"spec.externalName: Required value",
	}},
	{name: "endpointslice", in: `
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: s}
addressType: IPv4
ports: [{name: http, port: 80}, {name: http, port: 81, protocol: HTTP}]
endpoints:
- addresses: ["::1"]
- addresses: []
- addresses: [10.0.0.1]
  hostname: "Bad_Host"`, want: []string{
		"endpoints[0].addresses[0]: Invalid value: \"::1\": must be an IPv4 address",
		"endpoints[1].addresses: Required value: must contain at least 1 address",
		"endpoints[2].hostname: Invalid value: \"Bad_Host\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
		"ports[1].name: Duplicate value: \"http\"",
		"ports[1].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
	}},
	{name: "endpointslice fqdn", in: `
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: s}
addressType: FQDN
endpoints: [{addresses: [backend.example.com, "not a name"]}]`, want: []string{
		"endpoints[0].addresses[1]: Invalid value: \"not a name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
	}},
	{name: "endpointslice no address type", in: `
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: s}`, want: []string{
		"addressType: Required value",
	}},
	{name: "secret", in: `
apiVersion: v1
kind: Secret
metadata: {name: tls}
type: kubernetes.io/tls
data: {tls.crt: "", "bad key": ""}`, want: []string{
		"data[bad key]: Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
		"data[tls.key]: Required value",
	}},
	{name: "configmap", in: `
apiVersion: v1
kind: ConfigMap
metadata: {name: ca}
data: {ca.crt: x}
binaryData: {ca.crt: eA==}`, want: []string{
		"data[ca.crt]: Invalid value: \"ca.crt\": duplicate of key present in binaryData",
	}},
	{name: "namespace", in: `
apiVersion: v1
kind: Namespace
metadata: {name: a.b}`, want: []string{
		"metadata.name: Invalid value: \"a.b\": must not contain dots",
	}},
	{name: "unknown kind", in: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}`, want: []string{
		"kind: Unsupported value: \"apps/v1, Kind=Deployment\": supported values: \"gateway.networking.k8s.io/v1, Kind=BackendTLSPolicy\", \"gateway.networking.k8s.io/v1, Kind=GRPCRoute\", \"gateway.networking.k8s.io/v1, Kind=Gateway\", \"gateway.networking.k8s.io/v1, Kind=GatewayClass\", \"gateway.networking.k8s.io/v1, Kind=HTTPRoute\", \"gateway.networking.k8s.io/v1, Kind=ListenerSet\", \"gateway.networking.k8s.io/v1, Kind=ReferenceGrant\", \"gateway.networking.k8s.io/v1, Kind=TCPRoute\", \"gateway.networking.k8s.io/v1, Kind=TLSRoute\", \"gateway.networking.k8s.io/v1, Kind=UDPRoute\", \"discovery.k8s.io/v1, Kind=EndpointSlice\", \"v1, Kind=ConfigMap\", \"v1, Kind=Namespace\", \"v1, Kind=Secret\", \"v1, Kind=Service\"",
	}},
}
