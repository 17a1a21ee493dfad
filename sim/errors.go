package sim

import (
	"errors"
	"fmt"
	"strings"
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
)

// A FieldError reports one invalid field of a configuration: which field,
// the value it had and why it is refused. Programs that map fields to
// their own names (a command line maps Field "Nodes" to its --nodes flag)
// print Value and Reason without parsing Error's text.
//
// Err is the sentinel of the package whose Validate found the field (this
// package's ErrInvalidConfig, or another package's); Unwrap returns it,
// so errors.Is(err, ErrInvalidConfig) holds for this package's field
// errors.
type FieldError struct {
	// Field is the Go name of the field ("Nodes", "TimeoutMin"), or for a
	// textual setting the setting's name ("latency", "nodes"); empty when
	// the value is not a field (ParseLatency's spec).
	Field string
	// Value is the refused value.
	Value any
	// Reason says what is wrong with it, e.g. "must be in [1, 1000]". It
	// names no Go identifiers.
	Reason string
	// Err is the sentinel the error wraps; nil means ErrInvalidConfig.
	Err error
}

// Error returns e.g. `sim: invalid config: Nodes 0: must be in [1, 1000]`.
func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.Unwrap().Error())
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(" ")
	}
	b.WriteString(e.ValueString())
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// ValueString formats Value for messages: strings quoted, other values
// with %v.
func (e *FieldError) ValueString() string {
	if s, ok := e.Value.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	if s, ok := e.Value.(fmt.Stringer); ok && s != nil {
		return s.String()
	}
	return fmt.Sprint(e.Value)
}

// Unwrap returns the sentinel the error wraps.
func (e *FieldError) Unwrap() error {
	if e.Err == nil {
		return ErrInvalidConfig
	}
	return e.Err
}

// fieldErr returns a FieldError of this package.
func fieldErr(field string, value any, format string, args ...any) error {
	return &FieldError{Field: field, Value: value, Reason: fmt.Sprintf(format, args...)}
}
