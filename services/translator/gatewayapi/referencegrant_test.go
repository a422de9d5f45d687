package gatewayapi

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestAllowed(t *testing.T) {
	name := gatewayv1.ObjectName("db")
	grant := &gatewayv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Namespace: "data", Name: "g"},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "TCPRoute", Namespace: "app"}},
			To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: "Service", Name: &name}, {Group: "", Kind: "Secret"}},
		},
	}
	grants := []*gatewayv1.ReferenceGrant{grant}
	route := Reference{Group: gatewayv1.GroupName, Kind: "TCPRoute", Namespace: "app"}
	for _, c := range []struct {
		what     string
		from, to Reference
		want     bool
	}{
		{"the named Service", route, Reference{Kind: "Service", Namespace: "data", Name: "db"}, true},
		{"another Service", route, Reference{Kind: "Service", Namespace: "data", Name: "cache"}, false},
		{"any Secret", route, Reference{Kind: "Secret", Namespace: "data", Name: "x"}, true},
		{"another namespace", route, Reference{Kind: "Service", Namespace: "other", Name: "db"}, false},
		{"from another kind", Reference{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: "app"}, Reference{Kind: "Service", Namespace: "data", Name: "db"}, false},
		{"from another namespace", Reference{Group: gatewayv1.GroupName, Kind: "TCPRoute", Namespace: "web"}, Reference{Kind: "Service", Namespace: "data", Name: "db"}, false},
		{"within a namespace", Reference{Kind: "HTTPRoute", Namespace: "x"}, Reference{Kind: "Service", Namespace: "x", Name: "y"}, true},
	} {
		if got := Allowed(grants, c.from, c.to); got != c.want {
			t.Errorf("%s: Allowed = %v, want %v", c.what, got, c.want)
		}
	}
}
