package service_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/service"
)

// TestUsage checks the table `<service> -h` prints: each variable once,
// embedded structs included, with its type, default and description.
func TestUsage(t *testing.T) {
	type extra struct {
		Names   []string      `envconfig:"TEST_NAMES" desc:"some names"`
		Timeout time.Duration `envconfig:"TEST_TIMEOUT" default:"5s" desc:"how long"`
		hidden  int           // not a variable: unexported
	}
	var out strings.Builder
	if err := service.Usage(&out, &service.Base{}, &extra{}, &service.Base{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	rows := map[string]string{}
	for _, l := range lines[1:] {
		name, _, _ := strings.Cut(l, " ")
		if _, dup := rows[name]; dup {
			t.Errorf("%s listed twice", name)
		}
		rows[name] = l
	}
	want := map[string]string{
		"GATEWIRE_NATS_URL":             `string +nats://127\.0\.0\.1:4222 +NATS server URL\(s\), comma-separated$`,
		"GATEWIRE_NATS_CREDS":           `string {10,}path of a NATS credentials file`,
		"GATEWIRE_MEMORY_TRIM_INTERVAL": `duration +10s +how often`,
		"GATEWIRE_TEST_NAMES":           `list of string {10,}some names$`,
		"GATEWIRE_TEST_TIMEOUT":         `duration +5s +how long$`,
	}
	for name, w := range want {
		if re := regexp.MustCompile("^" + name + " +" + w); !re.MatchString(rows[name]) {
			t.Errorf("%q does not match %s", rows[name], re)
		}
	}
	if got, want := len(rows), 19; got != want {
		t.Errorf("%d variables, want %d:\n%s", got, want, out.String())
	}
	if !strings.HasPrefix(lines[0], "VARIABLE") {
		t.Errorf("no header: %q", lines[0])
	}
}
