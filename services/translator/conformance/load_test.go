package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwconformance "sigs.k8s.io/gateway-api/conformance"
	confkube "sigs.k8s.io/gateway-api/conformance/utils/kubernetes"
	confsuite "sigs.k8s.io/gateway-api/conformance/utils/suite"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/manifest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/translator/resources"
)

// className is the GatewayClass the suite runs with, as an implementation
// passes it with -gateway-class.
const className = "gatewire"

// baseManifests is the suite's base: namespaces, backends and shared Gateways.
const baseManifests = "base/manifests.yaml"

// document is one object of the suite's manifests, prepared as the suite's
// Applier prepares it and decoded by package manifest.
type document struct {
	source string // "<manifest file>#<document index>"
	object manifest.Object
}

// prepared returns the objects of a manifest file of the suite, prepared as
// the suite's Applier does before it applies them: every GatewayClass gets
// gatewire's controllerName and every Gateway gatewire's class (which is
// what the {GATEWAY_CLASS_NAME} and {GATEWAY_CONTROLLER_NAME} placeholders
// stand for), and the static address placeholders are dropped (gatewire
// offers no address pool). Objects of kinds gatewire does not read
// (Deployments, ...) are counted in skipped. Problems are what package
// manifest reports, checks of the API server included.
func prepared(path string) (docs []document, skipped map[string]int, problems []manifest.Problem, err error) {
	f, err := gwconformance.Manifests.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
	skipped = map[string]int{}
	for i := 0; ; i++ {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return docs, skipped, problems, nil
			}
			return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		kind, _ := obj["kind"].(string)
		if _, ok := manifest.LookupKind(kind); !ok {
			skipped[kind]++
			continue
		}
		prepare(obj)
		data, err := json.Marshal(obj)
		if err != nil {
			return nil, nil, nil, err
		}
		source := fmt.Sprintf("%s#%d", path, i)
		objs, probs := manifest.Decode(source, data)
		problems = append(problems, probs...)
		for _, o := range objs {
			docs = append(docs, document{source: source, object: o})
		}
	}
}

// prepare does what the suite's Applier does to obj.
func prepare(obj map[string]any) {
	spec, _ := obj["spec"].(map[string]any)
	switch obj["kind"] {
	case "GatewayClass":
		spec["controllerName"] = gatewayclass.DefaultControllerName
	case "Gateway":
		spec["gatewayClassName"] = className
		addrs, _ := spec["addresses"].([]any)
		kept := slices.DeleteFunc(slices.Clone(addrs), func(a any) bool {
			v, _ := a.(map[string]any)["value"].(string)
			return strings.HasPrefix(v, "PLACEHOLDER_")
		})
		if addrs != nil {
			spec["addresses"] = kept
		}
	}
}

// setupObjects returns the Secrets and ConfigMaps the suite creates in its
// setup (conformance/utils/suite), made by the suite's own functions.
func setupObjects(t *testing.T) []client.Object {
	infra, web, app := confsuite.InfrastructureNamespace, confsuite.WebBackendNamespace, confsuite.AppBackendNamespace
	out := []client.Object{
		confkube.MustCreateSelfSignedCertSecret(t, web, "certificate", []string{"*"}),
		confkube.MustCreateSelfSignedCertSecret(t, infra, "tls-validity-checks-certificate", []string{"*", "*.org", "*.wildcard.org"}),
	}
	cm, _, _ := confkube.MustCreateCACertConfigMap(t, web, "web-backend-cm")
	out = append(out, cm)
	cm, ca, key := confkube.MustCreateCACertConfigMap(t, infra, "tls-validity-checks-ca-certificate")
	out = append(out, cm, confkube.MustCreateCASignedClientCertSecret(t, infra, "tls-validity-checks-client-certificate", ca, key))
	cm, ca, key = confkube.MustCreateCACertConfigMap(t, infra, "tls-validity-checks-per-port-ca-certificate")
	out = append(out, cm, confkube.MustCreateCASignedClientCertSecret(t, infra, "tls-validity-checks-per-port-client-certificate", ca, key))
	cm, ca, key = confkube.MustCreateCACertConfigMap(t, infra, "tls-checks-ca-certificate")
	out = append(out, cm,
		confkube.MustCreateCASignedCertSecret(t, infra, "tls-checks-certificate", []string{"abc.example.com", "spiffe://abc.example.com/test-identity", "other.example.com"}, ca, key),
		confkube.MustCreateCASignedClientCertSecret(t, infra, "tls-checks-client-certificate", ca, key),
		confkube.MustCreateCASignedCertSecret(t, infra, "tls-passthrough-checks-certificate", []string{"abc.example.com"}, ca, key),
		confkube.MustCreateCASignedCertSecret(t, app, "tls-passthrough-checks-certificate", []string{"abc.example.com"}, ca, key),
		confkube.MustCreateCASignedCertSecret(t, infra, "tls-terminate-checks-certificate", []string{"tls.example.com"}, ca, key))
	cm, _, _ = confkube.MustCreateCACertConfigMap(t, infra, "mismatch-ca-certificate")
	return append(out, cm)
}

// setupDocs returns the setup objects as documents.
func setupDocs(t *testing.T) ([]document, []manifest.Problem, error) {
	var docs []document
	var problems []manifest.Problem
	for _, o := range setupObjects(t) {
		kind := "Secret"
		if _, ok := o.(*corev1.ConfigMap); ok {
			kind = "ConfigMap"
		}
		data, err := json.Marshal(o)
		if err != nil {
			return nil, nil, err
		}
		var obj map[string]any
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, nil, err
		}
		obj["apiVersion"], obj["kind"] = "v1", kind
		if data, err = json.Marshal(obj); err != nil {
			return nil, nil, err
		}
		source := "setup " + kind + " " + o.GetNamespace() + "/" + o.GetName()
		objs, probs := manifest.Decode(source, data)
		problems = append(problems, probs...)
		for _, m := range objs {
			docs = append(docs, document{source: source, object: m})
		}
	}
	return docs, problems, nil
}

// base is what every conformance test starts from: gatewire's GatewayClass,
// the base manifests and the setup objects, decoded once.
var base struct {
	once     sync.Once
	docs     []document
	skipped  map[string]int
	problems []manifest.Problem
	err      error
}

// baseDocs returns base's documents, decoding them on first use.
func baseDocs(t *testing.T) ([]document, []manifest.Problem, error) {
	base.once.Do(func() {
		docs, skipped, problems, err := prepared(baseManifests)
		if err != nil {
			base.err = err
			return
		}
		setup, setupProblems, err := setupDocs(t)
		base.docs = append(append([]document{ourClass()}, docs...), setup...)
		base.skipped, base.problems, base.err = skipped, append(problems, setupProblems...), err
	})
	return base.docs, base.problems, base.err
}

// ourClass is the GatewayClass the suite runs with; the implementation
// creates it before the suite runs.
func ourClass() document {
	data := fmt.Sprintf(`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
"metadata": {"name": %q}, "spec": {"controllerName": %q}}`, className, gatewayclass.DefaultControllerName)
	objs, _ := manifest.Decode("setup GatewayClass", []byte(data))
	return document{source: "setup GatewayClass", object: objs[0]}
}

// index returns an Index of docs at generation 1; a later document replaces
// an earlier one of the same kind and name, as the suite's apply does.
func index(docs []document) (*resources.Index, error) {
	idx := resources.NewIndex()
	for _, d := range docs {
		o := d.object
		res := &busv1.Resource{
			Group: o.Kind.Group, Version: o.Kind.Version, Kind: o.Kind.Kind,
			Namespace: o.Namespace, Name: o.Name, Generation: 1, ResourceVersion: "1",
			Object: o.JSON, Origin: "file:" + d.source,
		}
		if _, err := idx.Apply(res); err != nil {
			return nil, fmt.Errorf("%s: %w", d.source, err)
		}
	}
	return idx, nil
}

// testManifests returns the manifest files of the suite's gateway tests
// (not mesh), sorted.
func testManifests() ([]string, error) {
	files, err := fs.Glob(gwconformance.Manifests, "tests/*.yaml")
	slices.Sort(files)
	return files, err
}

// nn is a namespaced name.
func nn(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}
