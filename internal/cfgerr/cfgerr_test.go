package cfgerr

import (
	"errors"
	"testing"
	"time"
)

func TestFieldError(t *testing.T) {
	sentinel := errors.New("pkg: invalid config")
	err := New(sentinel, "Tick", time.Duration(0), "must be positive")
	if got, want := err.Error(), "pkg: invalid config: Tick 0s: must be positive"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, sentinel) {
		t.Fatal("the error does not wrap its sentinel")
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "Tick" || fe.Reason != "must be positive" {
		t.Fatalf("errors.As gave %#v", fe)
	}
	cause := errors.New("inner: bad jitter")
	err = &FieldError{Field: "J", Value: 1, Reason: cause.Error(), Err: sentinel, Cause: cause}
	if !errors.Is(err, sentinel) || !errors.Is(err, cause) {
		t.Fatal("the error must wrap both its sentinel and its cause")
	}
	s := &FieldError{Value: "x", Reason: "bad"}
	if got, want := s.Error(), `invalid config: "x": bad`; got != want {
		t.Fatalf("no field, no sentinel: %q, want %q", got, want)
	}
}
