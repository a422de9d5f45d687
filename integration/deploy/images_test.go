package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// TestImagesOverridable checks that a kustomization on top of an overlay can
// pin the images of a release with kustomize's images field.
func TestImagesOverridable(t *testing.T) {
	dir := t.TempDir()
	// kustomize takes relative paths only.
	production, err := filepath.Rel(dir, filepath.Join(k8sDir(t), "overlays", "production"))
	if err != nil {
		t.Fatal(err)
	}
	kustomization := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - %s
images:
  - name: ghcr.io/gatewire/provider
    newTag: v1.2.3
  - name: ghcr.io/gatewire/translator
    newTag: v1.2.3
  - name: ghcr.io/gatewire/xds
    newTag: v1.2.3
  - name: ghcr.io/gatewire/infra
    newName: registry.example.com/gatewire/infra
    newTag: v1.2.3
`, production)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		t.Fatal(err)
	}
	idx := index(render(t, dir))
	want := map[string]string{
		"provider":   "ghcr.io/gatewire/provider:v1.2.3",
		"translator": "ghcr.io/gatewire/translator:v1.2.3",
		"xds":        "ghcr.io/gatewire/xds:v1.2.3",
		"infra":      "registry.example.com/gatewire/infra:v1.2.3",
	}
	for name, image := range want {
		var d appsv1.Deployment
		idx.decode(t, "Deployment", "gatewire-"+name, &d)
		if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
			t.Errorf("gatewire-%s: image %s, want %s", name, got, image)
		}
	}
}
