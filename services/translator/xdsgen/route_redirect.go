package xdsgen

import (
	"cmp"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// redirectCodes are Envoy's redirect response codes by status.
var redirectCodes = map[uint32]routev3.RedirectAction_RedirectResponseCode{
	301: routev3.RedirectAction_MOVED_PERMANENTLY,
	302: routev3.RedirectAction_FOUND,
	303: routev3.RedirectAction_SEE_OTHER,
	307: routev3.RedirectAction_TEMPORARY_REDIRECT,
	308: routev3.RedirectAction_PERMANENT_REDIRECT,
}

// redirectAction answers a route's requests with its redirect, on listener
// l.
func redirectAction(r *irv1.Route, l *irv1.Listener) *routev3.RedirectAction {
	rd := r.GetAction().GetRedirect()
	action := &routev3.RedirectAction{
		HostRedirect: rd.GetHostname(),
		PortRedirect: redirectPort(rd, l),
		ResponseCode: redirectCodes[rd.GetStatusCode()], // 302 (FOUND) when unset
	}
	if rd.GetScheme() != "" {
		action.SchemeRewriteSpecifier = &routev3.RedirectAction_SchemeRedirect{SchemeRedirect: rd.GetScheme()}
	}
	switch {
	case !rd.GetHasPath():
	case rd.GetFullPath() != "":
		action.PathRewriteSpecifier = &routev3.RedirectAction_PathRedirect{PathRedirect: rd.GetFullPath()}
	default:
		action.PathRewriteSpecifier = &routev3.RedirectAction_PrefixRewrite{PrefixRewrite: prefixRewrite(rd.GetPrefix())}
	}
	return action
}

// redirectPort is the port_redirect of a redirect on listener l, 0 for none.
//
// The Gateway API's port is the redirect's port; without one, the scheme's
// well-known port (80 or 443) when the redirect sets a scheme, else the
// listener's port. The Location leaves out a port that is the default of
// its scheme (the redirect's, else the listener's).
//
// Envoy writes port_redirect into the Location. Without it, a Location with
// the redirect's hostname has no port, and one with the request's Host
// keeps the Host's port: the listener's as the client wrote it (none for
// the default), which Envoy drops when the scheme changes and it was the
// default of the old scheme. So port_redirect is left out when that gives
// the right port; otherwise it is written out, even a default port, which
// is then the only way to replace the request's port (":443" is valid in a
// Location, just not needed).
func redirectPort(rd *irv1.Redirect, l *irv1.Listener) uint32 {
	from := listenerScheme(l)
	scheme := cmp.Or(rd.GetScheme(), from)
	port := rd.GetPort()
	switch {
	case port != 0:
	case rd.GetScheme() != "":
		port = wellKnownPorts[scheme]
	default:
		port = l.GetPort()
	}
	toDefault := wellKnownPorts[scheme] == port
	switch {
	case rd.GetHostname() != "" && toDefault:
		return 0
	case rd.GetHostname() != "":
		return port
	case scheme == from && port == l.GetPort():
		return 0 // the request's Host is right as it is
	case scheme != from && toDefault && wellKnownPorts[from] == l.GetPort():
		return 0 // Envoy drops the request's default port, if it has one
	}
	return port
}

// wellKnownPorts are the default ports of the schemes a redirect may set.
var wellKnownPorts = map[string]uint32{"http": 80, "https": 443}

// listenerScheme is the scheme of the requests a listener receives.
func listenerScheme(l *irv1.Listener) string {
	if l.GetProtocol() == irv1.Protocol_PROTOCOL_HTTPS {
		return "https"
	}
	return "http"
}
