// Package gatewayapi translates one Gateway and everything attached to it
// into gatewire's IR, the status every involved object should carry, and the
// spec of the proxy that serves it.
//
// [Translate] is a pure function of the [resources.Index]: the same objects
// give the same Result, whichever replica runs it. It runs an ordered list of
// small processors over a per-call translation (see translate.go); each reads
// the inputs and what earlier processors recorded, and adds its part. Nothing
// is kept between calls.
//
// # What is ours
//
// A Gateway is translated when its GatewayClass names [ControllerName].
// Gateways of other classes, and the routes attached to them, are left to
// their own controllers: no IR and no status.
//
// # Listeners
//
// Gateway listeners that share a port share one IR Listener ("http-<port>").
// Only HTTP listeners are supported for now; others are not Accepted
// (UnsupportedProtocol). Listeners on one port with incompatible protocols,
// or with the same hostname, are Conflicted and get no routes. A listener
// admits HTTPRoutes from its own namespace (From: Same, the default), from
// all namespaces (All), or from namespaces whose labels match a selector
// (Selector).
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
// timeout of each attempt ("0s" disables either); retry retries connection
// failures, resets and the given status codes, attempts times, waiting at
// least backoff.
//
// # Backends
//
// A backendRef to a Service port becomes the Backend
// "<namespace>/<service>/<port>", whose endpoints are the addresses of the
// Service's EndpointSlices on the port whose name matches the Service port
// (ready ones are marked ready). A backendRef that cannot be resolved (no
// such Service or port, another kind, another namespace: ReferenceGrant is
// not supported yet) sets ResolvedRefs to False, and the share of traffic it
// would have received is answered with HTTP 500: in the IR it is a
// WeightedBackend with an empty backend name, and the route's direct_response
// is set to 500. A rule with no valid backend answers 500 for all of its
// traffic (direct_response with no backends).
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

// ControllerName is the spec.controllerName of the GatewayClasses that
// gatewire manages.
const ControllerName = "gatewire.dev/gatewayclass-controller"
