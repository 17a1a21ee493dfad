package sim

import (
	"errors"

	"github.com/raftick/raftick/internal/cfgerr"
)

// ErrInvalidConfig is wrapped by every error that Config.Validate,
// Network.Validate, NewCluster and ParseLatency report about their input.
var ErrInvalidConfig = errors.New("sim: invalid config")

// Errors of a Cluster's fault-injection methods.
var (
	// ErrNoServer is returned for a server ID outside 1..Nodes.
	ErrNoServer = errors.New("sim: no such server")
	// ErrServerRunning is returned by Start and Restart of a running server.
	ErrServerRunning = errors.New("sim: server is running")
	// ErrServerDown is returned by Pause of a server that is not running.
	ErrServerDown = errors.New("sim: server is not running")
	// ErrRealtime is reported by Run of a Cluster on a real-time wheel,
	// which its wheel's goroutine drives (see Config.Wheel).
	ErrRealtime = errors.New("sim: Run on a real-time cluster (its wheel drives it)")
)

// A FieldError reports one invalid field of a configuration: which field,
// the value it had and why it is refused; every raftick package reports
// its configuration errors with it (see election.FieldError,
// wheel.FieldError). Err is the sentinel of the package that refused the
// field: this package's ErrInvalidConfig for the engine's own fields.
type FieldError = cfgerr.FieldError

// fieldErr returns a FieldError of this package.
func fieldErr(field string, value any, format string, args ...any) error {
	return cfgerr.New(ErrInvalidConfig, field, value, format, args...)
}

// A SafetyError reports a run whose servers broke election safety, as
// electiontest.Checker defines it (at most one leader per term, one vote
// per server and term, terms that never go back, leaders elected by a
// majority, followers that follow their term's leader, no leader lease in
// a term below another leader's): a defect of the simulated nodes, never
// an outcome. Every Cluster checks the events of its nodes (and, between
// instants, their leases) and reports a violation through Err.
type SafetyError struct{ Err error }

func (e *SafetyError) Error() string { return "sim: election safety violated: " + e.Err.Error() }

func (e *SafetyError) Unwrap() error { return e.Err }
