package file_test

import (
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/bus"
)

const listenerSetDoc = `apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata:
  name: extra
spec:
  parentRef:
    name: quickstart
  listeners:
  - name: admin
    protocol: HTTP
    port: 9090
    hostname: admin.example.com
`

// TestListenerSetIsPublished: a ListenerSet document is published like the
// Gateway it names, with the API server's defaults; one the API server
// would refuse is a problem at its line.
func TestListenerSetIsPublished(t *testing.T) {
	e := newEnv(t)
	e.write("all.yaml", gatewayDoc+"---\n"+listenerSetDoc)
	e.start()
	key := bus.ResourceKey("ListenerSet", "default", "extra")
	ls, rev := e.get(key)
	if ls == nil {
		t.Fatalf("no %s; keys: %v", key, e.keys())
	}
	if ls.Group != "gateway.networking.k8s.io" || ls.Version != "v1" || ls.Origin != "file:"+e.path("all.yaml")+":14" {
		t.Errorf("ListenerSet resource %v", ls)
	}
	obj := object(t, ls)
	if field(obj, "spec", "parentRef", "kind") != "Gateway" {
		t.Errorf("the ListenerSet was published without the API server's defaults: %s", ls.Object)
	}

	e.write("all.yaml", gatewayDoc+"---\n"+strings.Replace(listenerSetDoc, "port: 9090", "port: 0", 1))
	e.eventually(contract, "the refused ListenerSet is reported", func() bool {
		return strings.Contains(e.problemText(), e.path("all.yaml")+":24: ListenerSet default/extra: spec.listeners[0].port")
	})
	if _, got := e.get(key); got != rev {
		t.Errorf("the last good ListenerSet was not kept: revision %d, was %d", got, rev)
	}
}
