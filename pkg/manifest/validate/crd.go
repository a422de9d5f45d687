package validate

import (
	"context"
	"embed"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// crdFiles holds the Gateway API CustomResourceDefinitions, copied verbatim
// from sigs.k8s.io/gateway-api v1.6.3 config/crd/experimental (a test checks
// that they still are).
//
//go:embed crds/*.yaml
var crdFiles embed.FS

// GatewayGroup is the API group of the Gateway API kinds.
const GatewayGroup = "gateway.networking.k8s.io"

// crds maps each Gateway API kind to the file of its CustomResourceDefinition.
var crds = map[string]*crd{
	"BackendTLSPolicy": {file: "crds/gateway.networking.k8s.io_backendtlspolicies.yaml"},
	"GatewayClass":     {file: "crds/gateway.networking.k8s.io_gatewayclasses.yaml"},
	"Gateway":          {file: "crds/gateway.networking.k8s.io_gateways.yaml"},
	"GRPCRoute":        {file: "crds/gateway.networking.k8s.io_grpcroutes.yaml"},
	"HTTPRoute":        {file: "crds/gateway.networking.k8s.io_httproutes.yaml"},
	"ListenerSet":      {file: "crds/gateway.networking.k8s.io_listenersets.yaml"},
	"ReferenceGrant":   {file: "crds/gateway.networking.k8s.io_referencegrants.yaml"},
	"TCPRoute":         {file: "crds/gateway.networking.k8s.io_tcproutes.yaml"},
	"TLSRoute":         {file: "crds/gateway.networking.k8s.io_tlsroutes.yaml"},
	"UDPRoute":         {file: "crds/gateway.networking.k8s.io_udproutes.yaml"},
}

// crd is one CustomResourceDefinition, read on first use.
type crd struct {
	file string

	once       sync.Once
	err        error
	namespaced bool
	storage    string
	// versions holds the served versions, each compiled on first use.
	versions map[string]*version

	// parsed is the definition load read, until a version's compile takes
	// it: a definition is a megabyte or two, and parsing one again costs
	// up to 40 ms (HTTPRoute's).
	parsedMu sync.Mutex
	parsed   *apiextensionsv1.CustomResourceDefinition
}

// version is one served version of a CustomResourceDefinition.
type version struct {
	once sync.Once
	s    *schema
	err  error
}

// schema is what the API server builds for a CustomResourceDefinition
// version: the structural schema (defaults pruned the way the server prunes
// them), the OpenAPI validator and the compiled CEL rules. It is read-only.
type schema struct {
	structural *structuralschema.Structural
	openAPI    apiservervalidation.SchemaValidator
	// quick tells, faster than openAPI, that an object is valid.
	quick *quickSchema
	// rules is nil when the version has no x-kubernetes-validations.
	rules *ruleNode
}

// compileNanos is the time spent so far reading and compiling schemas.
var compileNanos atomic.Int64

// CompileTime returns the time the process has spent so far reading the
// CustomResourceDefinitions and compiling their schemas and CEL rules: a
// one-off cost per kind and version (see Precompile), and for the rules per
// schema node, when the node first sees a value.
func CompileTime() time.Duration { return time.Duration(compileNanos.Load()) }

// load reads the CustomResourceDefinition's scope and versions.
func (c *crd) load() error {
	c.once.Do(func() {
		defer func(start time.Time) { compileNanos.Add(int64(time.Since(start))) }(time.Now())
		def, err := c.read()
		if err != nil {
			c.err = err
			return
		}
		c.parsed = def
		c.namespaced = def.Spec.Scope == apiextensionsv1.NamespaceScoped
		c.versions = map[string]*version{}
		for _, v := range def.Spec.Versions {
			if v.Storage {
				c.storage = v.Name
			}
			if v.Served && v.Schema != nil {
				c.versions[v.Name] = &version{}
			}
		}
	})
	return c.err
}

// read parses the CustomResourceDefinition. It is kept only until the
// first version is compiled (see parsed): its schemas are needed only while
// a version is compiled.
func (c *crd) read() (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := crdFiles.ReadFile(c.file)
	if err != nil {
		return nil, err
	}
	var def apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &def); err != nil {
		return nil, fmt.Errorf("%s: %w", c.file, err)
	}
	return &def, nil
}

// compileVersion compiles the schema of the version name, from the
// definition load parsed if no other version took it, else from a new
// parse.
func (c *crd) compileVersion(name string) (*schema, error) {
	c.parsedMu.Lock()
	def := c.parsed
	c.parsed = nil
	c.parsedMu.Unlock()
	if def == nil {
		var err error
		if def, err = c.read(); err != nil {
			return nil, err
		}
	}
	for _, v := range def.Spec.Versions {
		if v.Name == name && v.Schema != nil {
			return compile(v.Schema)
		}
	}
	return nil, fmt.Errorf("no schema")
}

// schema returns the compiled schema of the served version name, or of the
// storage version when name is not served.
func (c *crd) schema(name string) (*schema, error) {
	if err := c.load(); err != nil {
		return nil, err
	}
	v := c.versions[name]
	if v == nil {
		name, v = c.storage, c.versions[c.storage]
	}
	if v == nil {
		return nil, fmt.Errorf("%s: version %q is not served", c.file, name)
	}
	v.once.Do(func() {
		defer func(start time.Time) { compileNanos.Add(int64(time.Since(start))) }(time.Now())
		v.s, v.err = c.compileVersion(name)
		if v.err != nil {
			v.err = fmt.Errorf("%s version %s: %w", c.file, name, v.err)
		}
	})
	return v.s, v.err
}

// compile builds a version's validators the way the apiextensions-apiserver
// does when it starts serving a CustomResourceDefinition.
func compile(def *apiextensionsv1.CustomResourceValidation) (*schema, error) {
	internal := &apiextensionsinternal.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(def, internal, nil); err != nil {
		return nil, err
	}
	s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, err
	}
	openAPI, openAPISchema, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	rules, err := compileRules(s, celconfig.PerCallLimit)
	if err != nil {
		return nil, err
	}
	return &schema{structural: s, openAPI: openAPI, quick: newQuickSchema(openAPISchema), rules: rules}, nil
}

// Precompile compiles now, rather than on first use, the schemas of the
// given Gateway API kinds in the versions they are stored as (their CEL
// rules are still compiled node by node, when a node first sees a value;
// see the package doc); with no kind,
// of every kind, the most used first (GatewayClass, Gateway, HTTPRoute). It
// stops between two kinds when ctx is done, and returns ctx's error then, or
// the first error, naming the kind.
func Precompile(ctx context.Context, kinds ...string) error {
	if len(kinds) == 0 {
		kinds = append([]string{"GatewayClass", "Gateway", "HTTPRoute"}, GatewayKinds()...)
	}
	for _, k := range kinds {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := crds[k]
		if c == nil {
			return fmt.Errorf("%s is not a Gateway API kind", k)
		}
		if _, err := c.schema(""); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// GatewayKinds returns the Gateway API kinds the package validates, sorted.
func GatewayKinds() []string {
	out := make([]string, 0, len(crds))
	for k := range crds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
