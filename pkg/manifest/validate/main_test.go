package validate

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/gatewire/gatewire/pkg/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, testkit.IgnoreKlog()) }
