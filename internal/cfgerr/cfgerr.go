package cfgerr

import (
	"errors"
	"fmt"
	"strings"
)

// A FieldError reports one invalid field of a configuration: which field,
// the value it had and why it is refused. Programs that map fields to
// their own names (a command line maps Field "Nodes" to its --nodes flag)
// print Value and Reason without parsing Error's text.
//
// Err is the sentinel of the package that refused the field (its
// ErrInvalidConfig); Unwrap returns it.
type FieldError struct {
	// Field is the Go name of the field ("Nodes", "ElectionTimeout"), or
	// for a textual setting the setting's name ("latency"); empty when the
	// value is not a field.
	Field string
	// Value is the refused value.
	Value any
	// Reason says what is wrong with it, e.g. "must be in [1, 1000]". It
	// names no Go identifiers other than the package's own field names.
	Reason string
	// Err is the sentinel the error wraps.
	Err error
	// Cause, if set, is the error that made the value invalid (e.g. a
	// jitter policy's own validation error); errors.Is and errors.As see
	// it too. Reason carries its text.
	Cause error
}

// New returns a *FieldError wrapping sentinel, with the reason formatted
// from format and args.
func New(sentinel error, field string, value any, format string, args ...any) error {
	return &FieldError{Field: field, Value: value, Reason: fmt.Sprintf(format, args...), Err: sentinel}
}

// Error returns e.g. `sim: invalid config: Nodes 0: must be in [1, 1000]`.
func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.sentinel().Error())
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

// errInvalid stands in for a missing sentinel, so Error never fails.
var errInvalid = errors.New("invalid config")

// Unwrap returns the sentinel the error wraps, and Cause if set.
func (e *FieldError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.sentinel(), e.Cause}
	}
	return []error{e.sentinel()}
}

func (e *FieldError) sentinel() error {
	if e.Err == nil {
		return errInvalid
	}
	return e.Err
}
