package resources

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodeYAML(t *testing.T) {
	in := `# leading comment
---
apiVersion: v1
kind: Service
metadata:
  name: web
  managedFields: [{manager: kubectl}]
spec: {}
status: {loadBalancer: {}}
---
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gc, generation: 3, uid: u1}
`
	rs, err := DecodeYAML(strings.NewReader(in), "objects.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("got %d resources, want 2", len(rs))
	}
	svc, gc := rs[0], rs[1]
	if svc.Group != "" || svc.Version != "v1" || svc.Namespace != "default" || svc.Origin != "file:objects.yaml:3" {
		t.Errorf("service: group %q version %q namespace %q origin %q", svc.Group, svc.Version, svc.Namespace, svc.Origin)
	}
	var obj map[string]any
	if err := json.Unmarshal(svc.Object, &obj); err != nil {
		t.Fatal(err)
	}
	if _, ok := obj["status"]; ok {
		t.Error("status was not removed")
	}
	if _, ok := obj["metadata"].(map[string]any)["managedFields"]; ok {
		t.Error("managedFields were not removed")
	}
	if gc.Group != "gateway.networking.k8s.io" || gc.Namespace != "" || gc.Generation != 3 || gc.Uid != "u1" || gc.Origin != "file:objects.yaml:12" {
		t.Errorf("class: %+v", gc)
	}
}

func TestDecodeYAMLNamesTheBadDocument(t *testing.T) {
	in := "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\nkind: Service\nmetadata: {name: b}\n"
	_, err := DecodeYAML(strings.NewReader(in), "bad.yaml")
	if err == nil || !strings.Contains(err.Error(), "file:bad.yaml:5") {
		t.Errorf("err = %v, want one naming file:bad.yaml:5", err)
	}
	if _, err := DecodeYAML(strings.NewReader("a: [b"), "broken.yaml"); err == nil {
		t.Error("broken YAML decoded without error")
	}
}
