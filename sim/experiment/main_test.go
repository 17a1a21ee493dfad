package experiment

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

const ms = time.Millisecond

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
