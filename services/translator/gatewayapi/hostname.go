package gatewayapi

import "strings"

// intersect returns the hostnames a route serves on a listener: the route's
// hostnames that the listener hostname admits (made as specific as both
// allow), the listener's hostname when the route names none, or "*" when
// neither does. listenerHost is "" for any hostname. An empty result means
// the route does not fit the listener.
func intersect(listenerHost string, routeHosts []string) []string {
	switch {
	case len(routeHosts) == 0 && listenerHost == "":
		return []string{"*"}
	case len(routeHosts) == 0:
		return []string{listenerHost}
	case listenerHost == "":
		return routeHosts
	}
	var out []string
	for _, h := range routeHosts {
		var hit string
		switch {
		case h == listenerHost:
			hit = h
		case wildcardMatches(listenerHost, h):
			hit = h
		case wildcardMatches(h, listenerHost):
			hit = listenerHost
		}
		if hit != "" && !contains(out, hit) {
			out = append(out, hit)
		}
	}
	return out
}

// wildcardMatches reports whether wildcard ("*.example.com") matches host:
// host ends in ".example.com" and has at least one more label. host may
// itself be a narrower wildcard ("*.foo.example.com").
func wildcardMatches(wildcard, host string) bool {
	suffix, ok := strings.CutPrefix(wildcard, "*")
	return ok && len(host) > len(suffix) && strings.HasSuffix(host, suffix)
}
