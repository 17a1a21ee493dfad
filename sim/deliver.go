package sim

import "github.com/raftick/raftick/election"

// Deliver hands msg to its recipient now, as if it had just arrived over
// the network: it is dropped if the recipient is down or the link from
// its sender is cut, and queued if the recipient is paused or blocked on
// its disk. It does not count as sent. Experiments use it to put servers
// into a state the network would take time to reach, such as restarting
// every follower's election timer at one instant.
func (c *Cluster) Deliver(msg election.Message) { c.deliver(msg) }
