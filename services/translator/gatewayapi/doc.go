// Package gatewayapi translates one Gateway and everything attached to it
// into gatewire's IR, the status every involved object should carry, and the
// spec of the proxy that serves it.
//
// [Translate] is a pure function of the [resources.Index]: the same objects
// give the same Result, whichever replica runs it. It is made of three
// stages, each a function of explicit inputs:
//
//   - the gateway's context (buildContext): its listeners and those of the
//     ListenerSets it allows, validated, with their certificates;
//   - a route unit per HTTPRoute and GRPCRoute (routeUnit): its IR routes,
//     backends, attachments and status, from the context, the route and
//     the objects it names, read through a [resources.View] that records
//     what was read;
//   - the assembly (translation): an ordered list of small processors that
//     place the units on the IR listeners' virtual hosts, translate the L4
//     routes and BackendTLSPolicies, and set the Gateway's and ListenerSets'
//     conditions.
//
// A [Translator] keeps the context and the units of each gateway and
// reuses them while what they read is unchanged; when only routes and the
// objects they name changed, it patches its last translation with the
// units the changes touch instead of assembling the gateway again (see
// patch.go). The results are the same as Translate's: the translator's
// property tests check it after thousands of random changes.
//
// # What is ours
//
// A Gateway is translated when its GatewayClass names gatewire's
// controller name, which every entry point takes as an explicit input
// (configured once for all services, see pkg/gatewayclass).
// Gateways of other classes, and the routes attached to them, are left to
// their own controllers: no IR and no status. [TranslateClass] gives a
// class of ours its Accepted and SupportedVersion conditions.
//
// # Listeners
//
// HTTP, HTTPS, TLS (passthrough), TCP and UDP listeners are served; other
// protocols are not Accepted (UnsupportedProtocol). Gateway listeners that
// share a port (and transport: UDP ports are apart) share one IR Listener
// ("<protocol>-<port>"; HTTPS when an HTTPS listener shares its port with
// TLS ones). By default HTTP and HTTPS listeners admit HTTPRoutes and
// GRPCRoutes, TLS listeners TLSRoutes (and TCPRoutes in mode Terminate:
// TLS is terminated, then the bytes are proxied), TCP listeners TCPRoutes
// and UDP listeners UDPRoutes; allowedRoutes.kinds narrows that, and a kind the
// listener cannot serve is reported (InvalidRouteKinds). A listener admits
// routes from its own namespace (From: Same, the default), from all
// namespaces (All), or from namespaces whose labels match a selector
// (Selector). Listeners that are not distinct, or that gatewire cannot
// serve side by side, are Conflicted (see markConflicts): neither accepted
// nor programmed, they get no routes.
//
// An HTTPS listener terminates TLS with the certificates of its
// certificateRefs: kubernetes.io/tls Secrets, in another namespace only
// when a ReferenceGrant there allows it (else RefNotPermitted), with a
// matching PEM certificate and key (else InvalidCertificateRef). They are
// IR Secrets named "<namespace>/<secret>", served to the proxy over SDS,
// one filter chain per listener hostname (SNI). A listener that terminates
// TLS with no valid certificate is accepted, and routes attach to it, but
// it is not programmed. A TLS listener passes TLS through (mode
// Passthrough) or terminates it like HTTPS (mode Terminate) before
// forwarding the bytes: TLSRoutes get one filter chain per SNI name, the
// oldest route first when two ask for one name, and names a more specific
// listener of the port has are left to it.
//
// The Gateway's spec.tls.frontend makes its HTTPS listeners (by port, or
// all by default) require client certificates signed by the CAs of its
// ConfigMaps (ca.crt), or only ask for them (AllowInsecureFallback, then
// reported as InsecureFrontendValidationMode); with no valid CA the
// listeners are not accepted (NoValidCACertificate). Its
// spec.tls.backend.clientCertificateRef is the certificate the proxy
// presents to the backends it reaches over TLS.
//
// # Addresses and infrastructure
//
// spec.addresses entries without a value take the addresses of the
// gateway's Service; a value gatewire cannot bind makes the Gateway not
// Programmed (AddressNotUsable), and an address type it does not know not
// Accepted (UnsupportedAddress). spec.infrastructure.parametersRef names
// kinds gatewire has none of: the Gateway is not Accepted
// (InvalidParameters). spec.infrastructure labels and annotations are
// carried to the proxy's spec, for every object infra makes; gatewire's
// own keys win, and values the API server would refuse make the proxy
// invalid.
//
// # ListenerSets
//
// A ListenerSet adds its listeners to the Gateway its parentRef names when
// the Gateway's allowedListeners admits its namespace (None by default,
// Same, All or Selector; else NotAllowed) and the Gateway is Accepted
// (else ParentNotAccepted). Its listeners are validated like the Gateway's,
// in the ListenerSet's namespace: allowedRoutes From Same means the
// ListenerSet's, certificateRefs default to it, and another namespace
// takes a ReferenceGrant from ListenerSets. The merged listeners keep the
// Gateway API's precedence: the Gateway's own, then the ListenerSets'
// oldest first, then by namespace and name. A ListenerSet listener that
// conflicts with an earlier accepted one is Conflicted (its Accepted and
// Programmed carry the conflict's reason) and the earlier one keeps its
// port (see markSetConflicts). A ListenerSet is Accepted when one of its
// listeners is programmed (else ListenersNotValid); the Gateway counts
// those in status.attachedListenerSets. A route's parentRef of kind
// ListenerSet selects among that ListenerSet's listeners only, by
// sectionName and port as for a Gateway; a parentRef to the Gateway never
// reaches a ListenerSet's listeners. IR listeners list a ListenerSet's
// listeners as "<namespace>/<ListenerSet>/<listener>".
//
// # Routes
//
// An HTTPRoute attaches to the listeners its parentRefs select (by
// sectionName and port) that admit it and whose hostname intersects its
// hostnames. Its effective hostnames on a listener are the route hostnames
// the listener hostname admits (made as specific as both allow), the
// listener hostname when the route names none, or "*" when neither does. A
// wildcard ("*.example.com") matches any name that ends in ".example.com".
//
// An IR listener has one VirtualHost per hostname that its listeners or
// routes name. Envoy picks one virtual host per request, so each holds what
// the Gateway API says applies to its hostname: the routes of the most
// specific listener that matches it (listeners are isolated from each
// other), first those of the exact hostname, then those of each wildcard
// that covers it, most specific first, "*" last. Within each group routes
// are in Gateway API precedence order: Exact paths, then regular
// expressions, then the longest prefix; then a method match, more header
// matches, more query matches; then the oldest route, then namespace/name,
// then rule and match order (see comparePrecedence). A route has one status
// entry per distinct parentRef that names the gateway.
//
// Route names are derived from what a route matches, never from its
// position, so that reordering rules renames nothing:
// "<namespace>/<route>/[<rule name>/]<hash of the match>", with "-2", "-3"
// after matches repeated in one route (see routeNames). IR routes may be
// shared by several virtual hosts: the IR is read-only once built.
//
// # Rules
//
// Each match of a rule is one IR route. Paths match Exact, PathPrefix
// (element-wise: "/foo" matches "/foo" and "/foo/bar", not "/foobar") or
// RegularExpression (RE2, as Envoy compiles it); headers and query
// parameters Exact or RegularExpression; and a method. Values the API
// server would have refused (objects from files are not validated by one)
// and values Envoy would refuse, such as a regular expression too complex
// for Envoy's default program size limit, are problems like any other.
//
// A rule with a problem (a match, filter, timeout, retry or backendRef
// value it cannot have, or filters that cannot go together) is dropped:
// the route is PartiallyInvalid ("Dropped Rule <n>: ..."), or not Accepted
// when no rule is valid (UnsupportedValue or IncompatibleFilters). The
// requests its valid matches would have matched are answered with 500
// rather than left to fall through to another rule without its filters.
// A rule with no backendRefs, or none valid, answers 500.
//
// timeouts.request is the route timeout and timeouts.backendRequest the
// timeout of each attempt ("0s" disables either); without retries there is
// one attempt, and the route timeout is the shorter of the two. retry
// retries connection failures, resets and the given status codes, attempts
// times, waiting at least backoff.
//
// # Backends
//
// A backendRef to a Service port becomes the Backend
// "<namespace>/<service>/<port>" ("/tcp", "/udp" or, behind a TLS listener
// that terminates TLS, "/tls" appended for the routes of TLS, TCP and UDP
// listeners, whose backends are kept apart), whose
// endpoints are the addresses of the Service's EndpointSlices on the port
// whose name matches the Service port (ready ones are marked ready). An
// HTTP backend speaks HTTP/2 when a GRPCRoute uses it or its Service port's
// appProtocol is kubernetes.io/h2c (or h2c, grpc), HTTP/1.1 otherwise. A
// backendRef to a Service in another namespace needs a ReferenceGrant there
// for the route's kind and namespace ([Allowed]). A backendRef that cannot
// be resolved (no such Service or port: BackendNotFound; another kind:
// InvalidKind; another namespace without a grant: RefNotPermitted) sets
// ResolvedRefs to False, and the share of traffic it would have received
// is refused: for HTTP it is answered with 500 (in the IR a WeightedBackend
// with an empty backend name, and the route's direct_response is 500), for
// TCP and TLS the connections are closed. A rule with no valid backend
// answers 500 for all of its traffic (direct_response with no backends).
// TCP and UDP listeners forward to their oldest route only; every route
// that attaches is accepted and counted.
//
// A BackendTLSPolicy makes the gateway reach the HTTP backends (and those
// of TLS routes it terminates) of the Services it targets over TLS (see processBackendTLSPolicies); its status
// names the gateway as ancestor (in Status.parents).
//
// # Filters
//
// RequestHeaderModifier, ResponseHeaderModifier, RequestRedirect,
// URLRewrite, RequestMirror and CORS are supported on rules, and the two
// header modifiers on backendRefs. A RequestRedirect without port
// redirects to the scheme's well-known port when it sets a scheme, else to
// the listener's port, decided per listener when xDS is generated. A
// mirror whose backend cannot be resolved is left out (ResolvedRefs False).
// ExtensionRef filters name kinds gatewire does not know: ResolvedRefs is
// False (InvalidKind) and the rule answers 500. Other filter types make
// the rule invalid (UnsupportedValue); so do RequestRedirect with
// URLRewrite or RequestMirror, and a filter repeated
// (IncompatibleFilters).
package gatewayapi
