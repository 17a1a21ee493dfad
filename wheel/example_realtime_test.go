package wheel_test

import (
	"fmt"
	"time"

	"github.com/raftick/raftick/wheel"
)

// A real-time wheel: its driver goroutine fires each timer at its deadline
// (never before; late by about a tick at most, plus scheduling delay).
// Production code usually shares wheel.Shared() instead of making one.
func ExampleNew() {
	w, err := wheel.New(wheel.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer w.Stop()
	start := w.Now()
	fired := make(chan time.Duration, 1)
	if _, err := w.AfterFunc(20*time.Millisecond, func() { fired <- w.Now() - start }); err != nil {
		panic(err)
	}
	fmt.Println("fired no earlier than 20ms after scheduling:", <-fired >= 20*time.Millisecond)
	// Output:
	// fired no earlier than 20ms after scheduling: true
}
