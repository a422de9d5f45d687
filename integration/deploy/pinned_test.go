package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// releaseTag is the tag deploy/k8s/base gives gatewire's images.
func releaseTag(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(k8sDir(t), "base", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Images []struct {
			Name   string `json:"name"`
			NewTag string `json:"newTag"`
		} `json:"images"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	for _, img := range k.Images {
		if img.Name == "ghcr.io/gatewire/provider" {
			return img.NewTag
		}
	}
	t.Fatal("deploy/k8s/base/kustomization.yaml does not tag ghcr.io/gatewire/provider")
	return ""
}

// TestImagesPinned checks that every container of every overlay runs an
// image with a tag that does not move (not latest), pulled only when the
// node does not have it, and that gatewire's four images carry one
// version.
func TestImagesPinned(t *testing.T) {
	tag := releaseTag(t)
	if tag == "" || tag == "latest" {
		t.Fatalf("gatewire's images are tagged %q, want a version", tag)
	}
	for _, overlay := range overlays {
		idx := index(renderOverlay(t, overlay))
		for name, w := range workloads(t, idx) {
			for _, c := range w.pod.Spec.Containers {
				repo, imgTag, ok := strings.Cut(c.Image[strings.LastIndexByte(c.Image, '/')+1:], ":")
				switch {
				case !ok || imgTag == "" || imgTag == "latest":
					t.Errorf("%s %s container %s: image %s has no version tag", overlay, name, c.Name, c.Image)
				case strings.HasPrefix(c.Image, "ghcr.io/gatewire/") && imgTag != tag:
					t.Errorf("%s %s: image %s, want the release tag %s", overlay, name, c.Image, tag)
				case c.ImagePullPolicy != corev1.PullIfNotPresent:
					t.Errorf("%s %s container %s (%s): imagePullPolicy %q, want IfNotPresent for a tag that does not move", overlay, name, c.Name, repo, c.ImagePullPolicy)
				}
			}
		}
	}
}
