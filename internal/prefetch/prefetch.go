// Package prefetch asks the CPU to start loading a cache line that the
// caller will touch soon, so that independent cache misses overlap instead
// of stalling one after another. It is a hint: it never faults, whatever
// the address, and does nothing on architectures without an implementation.
//
// The wheel's driver uses it where a timer's memory is known a few steps
// before it is used (a slot's batch, a bucket's walk, timers in transit),
// election.Node's Step on the node it is about to handle, and
// multiraft.Host on the nodes of a coalesced batch's groups: at 100k Raft
// groups per wheel almost every timer or node touch is a miss to main
// memory. Range hints the lines of a
// struct in one call: the calls are not inlined (Go has no prefetch
// intrinsic outside the runtime), and at a few nanoseconds each, three
// calls per fire were measurable.
package prefetch
