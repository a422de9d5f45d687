package kube

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/gatewire/gatewire/pkg/certs/certstest"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/infra/issuer"
)

// objectsCase is the .in.yaml of a golden case: the options that differ from
// the defaults of testOptions, and the proxy (protojson field names).
type objectsCase struct {
	Options struct {
		Namespace string `json:"namespace"`
		Replicas  *int32 `json:"replicas"`
		// Insecure leaves the provisioner without an issuer
		// (GATEWIRE_XDS_INSECURE=true): no Secret, plaintext bootstrap.
		Insecure bool `json:"insecure"`
	} `json:"options"`
	Proxy json.RawMessage `json:"proxy"`
}

// testOptions are the defaults of the service's configuration.
func testOptions() Options {
	return Options{
		System:        "gatewire",
		XDSAddress:    "gatewire-xds.gatewire-system.svc:18000",
		AdminPort:     19000,
		ReadinessPort: 19001,
		Image:         "envoyproxy/envoy:distroless-v1.36.2",
		Replicas:      1,
		ServiceType:   string(corev1.ServiceTypeLoadBalancer),
		CPURequest:    resource.MustParse("100m"),
		MemoryRequest: resource.MustParse("128Mi"),
	}
}

// TestObjectsGolden renders testdata/objects/<case>.in.yaml and compares the
// objects, as the YAML of their apply configurations, with <case>.out.yaml;
// go test -update rewrites the .out.yaml files.
func TestObjectsGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/objects/*.in.yaml")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, in := range inputs {
		t.Run(strings.TrimSuffix(filepath.Base(in), ".in.yaml"), func(t *testing.T) {
			c, proxy := readCase(t, in)
			opts := testOptions()
			opts.Namespace = c.Options.Namespace
			if c.Options.Replicas != nil {
				opts.Replicas = *c.Options.Replicas
			}
			p, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Options.Insecure {
				iss, err := issuer.New(issuer.Options{CA: certstest.CA(t, "test CA")}, nil)
				if err != nil {
					t.Fatal(err)
				}
				p.SetIssuer(iss)
			}
			o, err := p.objects(proxy)
			if err != nil {
				t.Fatalf("objects: %v", err)
			}
			testkit.Golden(t, strings.TrimSuffix(in, ".in.yaml")+".out.yaml", render(t, o))
		})
	}
}

func readCase(t *testing.T, path string) (objectsCase, *busv1.Proxy) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c objectsCase
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	proxy := &busv1.Proxy{}
	if err := protojson.Unmarshal(c.Proxy, proxy); err != nil {
		t.Fatalf("%s: proxy: %v", path, err)
	}
	return c, proxy
}

// render writes the objects as a multi-document YAML, in the order they are
// applied.
func render(t *testing.T, o *gatewayObjects) []byte {
	t.Helper()
	objs := []any{o.serviceAccount, o.configMap, o.deployment}
	if o.service != nil {
		objs = append(objs, o.service)
	}
	var out bytes.Buffer
	for i, obj := range objs {
		data, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(data)
	}
	return out.Bytes()
}
