// Package gid tells goroutines apart cheaply, so that a lock's holder can
// be recorded and a call that would wait for a lock its own goroutine
// holds (a deadlock) can be refused instead.
//
// Current returns the address of the running goroutine's descriptor in
// the runtime: two goroutines running at the same time never share it,
// but the runtime reuses a descriptor after its goroutine exits, so it
// identifies a goroutine only while that goroutine lives. It is a plain
// number, never dereferenced. On architectures without an implementation
// Current returns 0, and checks built on it find nothing.
package gid
