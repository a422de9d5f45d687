package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/manifest"
	"github.com/gatewire/gatewire/pkg/manifest/validate"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/translator"
	"github.com/gatewire/gatewire/services/translator/gatewayapi"
	"github.com/gatewire/gatewire/services/translator/resources"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// translateOptions are the flags of gatewire translate.
type translateOptions struct {
	inputs inputs
	// output is what to print: status, ir or xds.
	output string
	// format is yaml or json.
	format  string
	verbose bool
	// progress prints a line of progress every few seconds on the standard
	// error while the input is read.
	progress bool
	// controller is gatewire's controller name: the Gateways of the
	// classes that name it are translated.
	controller string
	// memory is the soft limit of the heap during the translation.
	memory memoryLimit
}

var (
	translateOutputs = []string{"status", "ir", "xds"}
	translateFormats = []string{"yaml", "json"}
)

func runTranslate(ctx context.Context, args []string, stdout io.Writer) error {
	opts, err := parseTranslateFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	return translate(ctx, opts, os.Stdin, stdout, os.Stderr)
}

func parseTranslateFlags(args []string, stderr io.Writer) (translateOptions, error) {
	var opts translateOptions
	fs := flag.NewFlagSet("translate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), translateUsage)
		fs.PrintDefaults()
	}
	fs.Var(&opts.inputs, "f", "a manifest file, a folder of manifests (.yaml, .yml, .json, read recursively) or - for the standard input; repeatable")
	fs.StringVar(&opts.output, "output", "status", "what to print: status, ir or xds")
	fs.StringVar(&opts.format, "o", "yaml", "output format: yaml or json")
	fs.BoolVar(&opts.verbose, "v", false, "print what each step took on the standard error")
	fs.StringVar(&opts.controller, "controller-name", gatewayclass.DefaultControllerName,
		"the spec.controllerName of the GatewayClasses to translate, as the services' GATEWIRE_CONTROLLER_NAME")
	opts.memory = memoryLimit{auto: true}
	fs.Var(&opts.memory, "memory-limit", "the soft limit of the heap while translating: auto (a multiple of the heap the indexed input holds), off, or a size such as 300MiB; GOMEMLIMIT wins when set")
	fs.BoolVar(&opts.progress, "progress", isTerminal(stderr), "print a line every few seconds on the standard error while the input is read (the default when it is a terminal)")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	switch {
	case fs.NArg() > 0:
		return opts, usageError("unexpected arguments %q: name inputs with -f", fs.Args())
	case len(opts.inputs) == 0:
		return opts, usageError("no input: name files or folders with -f, or - for the standard input")
	case !slices.Contains(translateOutputs, opts.output):
		return opts, usageError("-output %q: want one of %s", opts.output, strings.Join(translateOutputs, ", "))
	case !slices.Contains(translateFormats, opts.format):
		return opts, usageError("-o %q: want one of %s", opts.format, strings.Join(translateFormats, ", "))
	}
	if err := gatewayclass.ValidateControllerName(opts.controller); err != nil {
		return opts, usageError("-controller-name: %v", err)
	}
	return opts, nil
}

const translateUsage = `Usage: gatewire translate -f FILE [-f FILE...] [-output status|ir|xds] [-o yaml|json] [-controller-name NAME] [-memory-limit auto|off|SIZE] [-v] [-progress]

Translates Gateway API manifests offline, as the translator service would,
and prints the result on the standard output:

  -output status  the Gateway API objects of the input, as the file provider
                  publishes them (defaults applied, generation 1), with the
                  status gatewire gives them; every lastTransitionTime is
                  1970-01-01T00:00:00Z so that the same input always prints
                  the same bytes (core objects are not printed)
  -output ir      the IR of every gatewire Gateway (private keys left out)
  -output xds     the xDS resources of every gatewire Gateway (private keys
                  redacted)

The input is checked as 'kubectl apply' would be: an object the Kubernetes
API server would refuse is reported with its file, line and field, and the
command exits with status 1 without printing a result.

Flags:
`

// translated is the translation of every gatewire gateway of an input.
type translated struct {
	// controller is the controller name the input was translated for.
	controller string
	// classes are the statuses of gatewire's GatewayClasses, by name.
	classes []*busv1.Status
	// gateways are the outputs of gatewire's Gateways, by namespace and name.
	gateways []*translator.Output
}

func translate(ctx context.Context, opts translateOptions, stdin io.Reader, stdout, stderr io.Writer) error {
	step := stepTimer(opts.verbose, stderr)
	var done, total atomic.Int64
	stop := startProgress(opts.progress, stderr, &done, &total)
	objects, problems := readInputs(opts.inputs, stdin, &done, &total)
	stop()
	step("read and validate", fmt.Sprintf("%d objects; validation schemas compiled in %v, once",
		len(objects), validate.CompileTime().Round(time.Millisecond)))
	if len(problems) > 0 {
		return problemsError(problems)
	}
	idx := resources.NewIndex()
	for _, o := range objects {
		if _, err := idx.Apply(manifest.Resource(o)); err != nil {
			return fmt.Errorf("%s:%d: %w", o.Path, o.Line, err)
		}
	}
	objects = printed(opts.output, objects)
	limit, restore := applyMemoryLimit(opts.memory)
	defer restore()
	step("index", limit)
	t := translateAll(ctx, idx, opts.controller)
	step("translate", fmt.Sprintf("%d gateways", len(t.gateways)))
	docs, err := render(opts.output, objects, t)
	if err != nil {
		return err
	}
	if err := write(stdout, opts.format, opts.output, docs); err != nil {
		return err
	}
	step("print", fmt.Sprintf("%d documents", len(docs)))
	return nil
}

// printed returns the objects whose JSON the output prints: the Gateway
// API objects for the status output, none for the others. The index holds
// its own copy of every object, so the JSON of the rest (most of an
// input's bytes: its Services and EndpointSlices) is dropped before the
// translation, and with it a part of the heap the memory limit is a
// multiple of.
func printed(output string, objects []manifest.Object) []manifest.Object {
	if output != "status" {
		return nil
	}
	kept := objects[:0]
	for _, o := range objects {
		if o.Kind.Group == gatewayv1.GroupName {
			kept = append(kept, o)
		}
	}
	clear(objects[len(kept):])
	return slices.Clip(kept)
}

// translateAll translates every class and gateway of idx that names
// controller, the gateways in parallel (translation only reads idx).
func translateAll(ctx context.Context, idx *resources.Index, controller string) translated {
	t := translated{controller: controller}
	for _, name := range idx.GatewayClasses() {
		if st := gatewayapi.TranslateClass(idx, controller, name); st != nil {
			t.classes = append(t.classes, st)
		}
	}
	names := idx.Gateways()
	outs := make([]*translator.Output, len(names))
	work := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range work {
				outs[i] = translator.Translate(idx, controller, names[i])
			}
		})
	}
	for i := range names {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	for _, out := range outs {
		if out != nil {
			t.gateways = append(t.gateways, out)
		}
	}
	return t
}

// problemsError is the error of an input with problems: one line each.
func problemsError(problems []manifest.Problem) error {
	var b strings.Builder
	fmt.Fprintf(&b, "the input has %d problem(s):", len(problems))
	for _, p := range problems {
		b.WriteString("\n" + p.Error())
	}
	return fmt.Errorf("%s", b.String())
}

// stepTimer returns a function that prints, when verbose, the time since it
// was last called (since stepTimer was called, first) and the CPU time of
// the process so far.
func stepTimer(verbose bool, w io.Writer) func(step, detail string) {
	last := time.Now()
	return func(step, detail string) {
		if !verbose {
			return
		}
		now := time.Now()
		fmt.Fprintf(w, "%-18s %10v  cpu %10v  %s\n", step, now.Sub(last).Round(time.Millisecond),
			cpuTime().Round(time.Millisecond), detail)
		last = now
	}
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
