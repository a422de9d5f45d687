package conformance

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/gateway-api/conformance/tests"
	confsuite "sigs.k8s.io/gateway-api/conformance/utils/suite"
)

// TestSuiteManifests loads the base and each test's manifests of the suite:
// every object must pass the API server's checks, every class and gateway
// must translate without a panic into valid xDS, and every condition must
// carry its object's generation.
func TestSuiteManifests(t *testing.T) {
	files, err := testManifests()
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in the conformance module: %v", err)
	}
	skipped := map[string]int{}
	for _, file := range files {
		t.Run(strings.TrimSuffix(strings.TrimPrefix(file, "tests/"), ".yaml"), func(t *testing.T) {
			o := load(t, file, "", nil)
			for _, p := range o.problems {
				t.Errorf("refused as kubectl apply would refuse it: %v", p)
			}
			for _, p := range o.panics {
				t.Error(p)
			}
			for gw, out := range o.gateways {
				if out.XDSError != nil {
					t.Errorf("Gateway %s: invalid xDS: %v", gw, out.XDSError)
				}
			}
			for _, err := range staleConditions(o) {
				t.Error(err)
			}
			for k, n := range o.skipped {
				skipped[k] += n
			}
		})
	}
	t.Logf("%d manifest files; objects of kinds gatewire does not read, left out: %v", len(files), skipped)
}

// staleConditions returns an error for every status condition of o whose
// observedGeneration is not its object's generation.
func staleConditions(o *outcome) []error {
	var errs []error
	for name, st := range o.classes {
		if err := stale(o, objectRef{"GatewayClass", "", name}, st.GetConditions()); err != nil {
			errs = append(errs, err)
		}
	}
	for gw, out := range o.gateways {
		ref := objectRef{"Gateway", gw.Namespace, gw.Name}
		cs := out.Statuses[0].GetConditions()
		for _, l := range out.Statuses[0].GetListeners() {
			cs = append(cs, l.GetConditions()...)
		}
		if err := stale(o, ref, cs); err != nil {
			errs = append(errs, err)
		}
	}
	for key, parents := range o.parents {
		kind, rest, _ := strings.Cut(key, "/")
		ns, name, _ := strings.Cut(rest, "/")
		for _, p := range parents {
			if err := stale(o, objectRef{kind, ns, name}, p.GetConditions()); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// TestStatusConditions compares, for each test of the table, the conditions
// the test expects with those gatewire gives, and logs a line per check. A
// mismatch fails unless the test is pending on a gatewire feature.
func TestStatusConditions(t *testing.T) {
	for _, ct := range conformanceTests {
		t.Run(ct.name, func(t *testing.T) {
			o := load(t, ct.manifest, ct.extra, ct.bump)
			for _, p := range o.problems {
				t.Errorf("refused as kubectl apply would refuse it: %v", p)
			}
			var failed []string
			for _, c := range ct.checks {
				if err := c.verify(o); err != nil {
					failed = append(failed, fmt.Sprintf("%s: %v", c.what, err))
				}
			}
			switch {
			case len(failed) == 0 && ct.pending != "":
				t.Logf("MATCH, although pending on %q: clear its pending field", ct.pending)
			case len(failed) == 0:
				t.Logf("MATCH: %d checks", len(ct.checks))
			case ct.pending != "":
				t.Logf("MISMATCH, pending on %s:\n%s", ct.pending, strings.Join(failed, "\n"))
			default:
				t.Errorf("MISMATCH:\n%s", strings.Join(failed, "\n"))
			}
		})
	}
}

// TestTableNamesSuiteTests checks that every test of the table is a test of
// the suite, with that manifest.
func TestTableNamesSuiteTests(t *testing.T) {
	for _, ct := range conformanceTests {
		i := slices.IndexFunc(tests.ConformanceTests, func(s confsuite.ConformanceTest) bool { return s.ShortName == ct.name })
		if i < 0 {
			t.Errorf("%s is not a test of the suite", ct.name)
			continue
		}
		if !slices.Contains(tests.ConformanceTests[i].Manifests, ct.manifest) {
			t.Errorf("%s: the suite's test has manifests %v, not %s", ct.name, tests.ConformanceTests[i].Manifests, ct.manifest)
		}
	}
}
