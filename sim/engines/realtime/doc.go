// Package realtime is the simulator's real-time engine of raftick itself:
// it runs the failover and bootstrap experiments of an experiment.Setup
// on raftick's own election.Nodes as a user deploys them, on a real-time
// wheel (wheel.New, its driver goroutine, the Go scheduler, the garbage
// collector, the monotonic clock), over an in-process network that holds
// each message for the latency model's draw in real time. Loss,
// duplication, disk write delays and the crash are sim.Cluster's own (the
// cluster of the virtual engine, here on real time), and the trials are
// experiment.RunFailover and RunBootstrap, so both engines are timed by
// the same definitions. What differs from `--engine raftick` is time
// itself: comparing the two (raftsim compare) measures what the virtual
// model leaves out.
//
// Each trial's cluster has its own wheel (1ms tick, the default a user
// runs) and its own carrier of messages (a timerfd on Linux, so that a
// message is late by tens of microseconds, not by the runtime's
// millisecond sleeps). Everything that happens in a trial, the wheel's
// callbacks (through wheel.Config.Executor) and the carrier's deliveries,
// runs under one lock, so that the nodes, the network model and the
// trial's hooks see one event at a time as on a virtual wheel; the trial
// itself holds the lock outside Cluster.Run, so that nothing moves while
// it reads the cluster. Stats collects what the engine measured of its
// own lateness: how late the wheel ran a callback past its deadline, and
// how late the carrier delivered a message.
//
// Trials are not reproducible: the seed fixes the draws (timeouts,
// latencies, loss, the crash point) but not the order in which real time
// interleaves them.
package realtime
