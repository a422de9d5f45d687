package certgen

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// podNamespace is where a pod finds its own namespace.
const podNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Main is the certgen command: it parses args, connects to the API server
// as kubectl would (KUBECONFIG, ~/.kube/config, or the pod's service
// account) and runs Run. Its log goes to w.
func Main(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("certgen", flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: certgen [flags]\n\nWrites the CA, the xds and NATS certificates and the NATS users of gatewire as Secrets\n(see deploy/README.md); running it again keeps what is there and renews what is due.\n\nFlags:")
		fs.PrintDefaults()
	}
	var o Options
	fs.StringVar(&o.Namespace, "namespace", defaultNamespace(), "namespace of gatewire and of the Secrets")
	fs.StringVar(&o.System, "system", envOr("GATEWIRE_SYSTEM", "gatewire"), "installation name (GATEWIRE_SYSTEM)")
	fs.StringVar(&o.TrustDomain, "trust-domain", os.Getenv("GATEWIRE_TRUST_DOMAIN"), "trust domain of the SPIFFE IDs (GATEWIRE_TRUST_DOMAIN); empty means gatewire.local")
	xds := fs.String("xds-names", "", "DNS names of the xds server's certificate, comma-separated; empty: the gatewire-xds Service's")
	nats := fs.String("nats-names", "", "DNS names of the NATS servers' certificate, comma-separated; empty: the nats and nats-headless Services'")
	fs.DurationVar(&o.Lifetime, "lifetime", 0, "lifetime of the xds server's certificate; 0 means 168h")
	fs.DurationVar(&o.NATSLifetime, "nats-lifetime", 0, "lifetime of the NATS servers' certificate; 0 means 8760h")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.XDSNames, o.NATSNames = split(*xds), split(*nats)
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("certgen: no API server (set KUBECONFIG or run in a pod): %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return fmt.Errorf("certgen: %w", err)
	}
	return Run(ctx, c, o, slog.New(slog.NewTextHandler(w, nil)))
}

func defaultNamespace() string {
	if ns, err := os.ReadFile(podNamespace); err == nil && strings.TrimSpace(string(ns)) != "" {
		return strings.TrimSpace(string(ns))
	}
	return "gatewire-system"
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func split(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
