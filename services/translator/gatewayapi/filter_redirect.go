package gatewayapi

import (
	"strings"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// redirectCodes are the status codes a RequestRedirect may answer with.
var redirectCodes = map[int]bool{301: true, 302: true, 303: true, 307: true, 308: true}

// redirect translates a RequestRedirect filter. What it leaves unset keeps
// the request's value; the port that goes with an unset port (the scheme's
// well-known port, or the listener's) is decided per listener, when the
// route is turned into Envoy configuration.
func redirect(f *gatewayv1.HTTPRequestRedirectFilter, field string) (*irv1.Redirect, *problem) {
	if f == nil {
		return nil, unsupported("%s: missing", field)
	}
	out := &irv1.Redirect{StatusCode: 302}
	if f.Scheme != nil {
		if *f.Scheme != "http" && *f.Scheme != "https" {
			return nil, unsupported("%s.scheme: %q is not supported (http or https)", field, *f.Scheme)
		}
		out.Scheme = *f.Scheme
	}
	if f.Hostname != nil {
		if p := checkHostname(string(*f.Hostname), field+".hostname"); p != nil {
			return nil, p
		}
		out.Hostname = string(*f.Hostname)
	}
	if f.Port != nil {
		if *f.Port < 1 || *f.Port > 65535 {
			return nil, unsupported("%s.port: %d is not a port number", field, *f.Port)
		}
		out.Port = uint32(*f.Port)
	}
	if f.StatusCode != nil {
		if !redirectCodes[*f.StatusCode] {
			return nil, unsupported("%s.statusCode: %d is not supported (301, 302, 303, 307 or 308)", field, *f.StatusCode)
		}
		out.StatusCode = uint32(*f.StatusCode)
	}
	var p *problem
	if out.FullPath, out.Prefix, out.HasPath, p = pathModifier(f.Path, field+".path"); p != nil {
		return nil, p
	}
	return out, nil
}

// urlRewrite translates a URLRewrite filter.
func urlRewrite(f *gatewayv1.HTTPURLRewriteFilter, field string) (*irv1.URLRewrite, *problem) {
	if f == nil {
		return nil, unsupported("%s: missing", field)
	}
	out := &irv1.URLRewrite{}
	if f.Hostname != nil {
		if p := checkHostname(string(*f.Hostname), field+".hostname"); p != nil {
			return nil, p
		}
		out.Hostname = string(*f.Hostname)
	}
	var p *problem
	if out.FullPath, out.Prefix, out.HasPath, p = pathModifier(f.Path, field+".path"); p != nil {
		return nil, p
	}
	return out, nil
}

// pathModifier returns the full path or the prefix a path modifier of a
// redirect or rewrite puts in place, and whether it has one (m is not
// nil). A prefix may be empty ("/" is then what replaces the matched
// prefix); a full path may not.
func pathModifier(m *gatewayv1.HTTPPathModifier, field string) (full, prefix string, has bool, p *problem) {
	if m == nil {
		return "", "", false, nil
	}
	switch m.Type {
	case gatewayv1.FullPathHTTPPathModifier:
		if m.ReplaceFullPath == nil {
			return "", "", true, unsupported("%s.replaceFullPath: missing", field)
		}
		return *m.ReplaceFullPath, "", true, checkNewPath(*m.ReplaceFullPath, field+".replaceFullPath")
	case gatewayv1.PrefixMatchHTTPPathModifier:
		if m.ReplacePrefixMatch == nil {
			return "", "", true, unsupported("%s.replacePrefixMatch: missing", field)
		}
		if *m.ReplacePrefixMatch == "" {
			return "", "", true, nil
		}
		return "", *m.ReplacePrefixMatch, true, checkNewPath(*m.ReplacePrefixMatch, field+".replacePrefixMatch")
	}
	return "", "", true, unsupported("%s.type: %q is not supported", field, m.Type)
}

// checkNewPath checks a path that replaces the request's: absolute, at most
// 1024 characters, only visible ASCII characters and no fragment.
func checkNewPath(path, field string) *problem {
	switch {
	case !strings.HasPrefix(path, "/"):
		return unsupported("%s: %q must start with '/'", field, path)
	case len(path) > 1024:
		return unsupported("%s: longer than 1024 characters", field)
	}
	for i := 0; i < len(path); i++ {
		if c := path[i]; c <= ' ' || c >= 0x7f || c == '#' || c == '\\' {
			return unsupported("%s: %q has characters that are not allowed in a path", field, path)
		}
	}
	return nil
}

// prefixReplacing reports whether a redirect or rewrite replaces the
// matched prefix, which only a PathPrefix match has.
func prefixReplacing(rd *irv1.Redirect, rw *irv1.URLRewrite) bool {
	return (rd.GetHasPath() && rd.GetFullPath() == "") || (rw.GetHasPath() && rw.GetFullPath() == "")
}
