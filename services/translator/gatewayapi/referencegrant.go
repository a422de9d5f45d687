package gatewayapi

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// Reference is one end of a reference between Kubernetes objects: the
// object that refers (its name is not needed) or the object referred to.
// Group is "" for the core group.
type Reference struct {
	Group     string
	Kind      string
	Namespace string
	Name      string
}

// Allowed reports whether from may refer to to. A reference within one
// namespace is always allowed. A reference to another namespace is allowed
// when one of grants, which must be the ReferenceGrants of to's namespace,
// lists from's group, kind and namespace in its from and to's group and kind
// (and name, when the grant names one) in its to. Allowed is a pure
// function; grants of other namespaces are ignored.
func Allowed(grants []*gatewayv1.ReferenceGrant, from, to Reference) bool {
	if from.Namespace == to.Namespace {
		return true
	}
	for _, g := range grants {
		if g.Namespace == to.Namespace && grantsFrom(g, from) && grantsTo(g, to) {
			return true
		}
	}
	return false
}

func grantsFrom(g *gatewayv1.ReferenceGrant, from Reference) bool {
	for _, f := range g.Spec.From {
		if string(f.Group) == from.Group && string(f.Kind) == from.Kind && string(f.Namespace) == from.Namespace {
			return true
		}
	}
	return false
}

func grantsTo(g *gatewayv1.ReferenceGrant, to Reference) bool {
	for _, t := range g.Spec.To {
		if string(t.Group) == to.Group && string(t.Kind) == to.Kind && (t.Name == nil || *t.Name == "" || string(*t.Name) == to.Name) {
			return true
		}
	}
	return false
}

// allowedBy reports whether the reference from → to is allowed by the
// ReferenceGrants of to's namespace, read through r.
func allowedBy(r resources.Reader, from, to Reference) bool {
	if from.Namespace == to.Namespace {
		return true
	}
	return Allowed(r.ReferenceGrantsIn(to.Namespace), from, to)
}

// allowed is allowedBy through the context's reader.
func (t *gatewayCtx) allowed(from, to Reference) bool { return allowedBy(t.idx, from, to) }

// allowed is allowedBy through the route's reader.
func (t *routeBuilder) allowed(from, to Reference) bool { return allowedBy(t.idx, from, to) }
