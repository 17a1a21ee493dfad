// Package peers compares raftick's timing wheel with what a Go user would
// reach for instead: the standard library's runtime timers (time.AfterFunc,
// time.Timer.Reset) and a third-party timing wheel,
// github.com/zeromicro/go-zero/core/collection.TimingWheel.
//
// It lives in its own module (github.com/raftick/raftick/bench/peers) so that peer
// modules never enter raftick's go.mod. The package holds only the adapters
// (Timers, Impls); the benchmarks are in bench_test.go:
//
//	cd bench/peers && go test -run '^$' -bench . -benchmem
//
// Every adapter drives n timers addressed by index, all calling one
// callback with the index, and is called through the Timers interface, so
// each implementation pays the same dynamic-dispatch cost (a nanosecond or
// two; raftick's own wheel/bench_test.go calls the wheel directly).
package peers
