package sim

import (
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/sim/internal/vnet"
)

// A message a node sends goes through send (counted, held while its
// server is paused), transmit (a response waits for its server's pending
// disk writes; loss, duplication and latency are drawn) and schedule (the
// courier carries it on the wheel) to deliver (dropped if its server is
// down or the link is cut when it arrives, queued while the server is
// paused) and step. Every message handed to the network is counted once
// in NetStats as delivered, dropped for one reason, or still in flight.

// send takes msg from a node of from.
func (c *Cluster) send(from *server, msg election.Message) {
	c.stats.Sent++
	if c.cfg.OnSend != nil {
		c.cfg.OnSend(msg)
	}
	if !from.up {
		c.stats.DroppedDown++
		return
	}
	if from.paused {
		c.stats.Held++
		from.held = append(from.held, msg)
		return
	}
	c.transmit(from, msg)
}

// transmit puts msg from a running, unpaused server in flight.
func (c *Cluster) transmit(from *server, msg election.Message) {
	now := c.w.Now()
	var depart time.Duration
	net := &c.cfg.Network
	if msg.Type.IsResponse() && from.diskEnd > now {
		depart = from.diskEnd - now
	}
	if net.CancelBackoff > 0 && rpcRequest(msg) && !c.rpcSend(from, msg) {
		return // held while its peer is backed off
	}
	if !msg.Type.IsResponse() && net.SendGap != nil {
		at := max(now, from.sendFree)
		from.sendFree = at + net.SendGap.Sample(c.rng)
		depart = at - now
	}
	copies := vnet.Copies(c.rng, net.Loss, net.Duplicate)
	switch copies {
	case 0:
		c.stats.DroppedLoss++
		c.rpcDropped(msg)
		return
	case 2:
		c.stats.Duplicated++
	}
	lat := net.latency(from.id, msg.To)
	for range copies {
		d := depart
		if lat != nil {
			d = addSat(d, lat.Sample(c.rng))
		}
		c.schedule(msg, d)
	}
}

// schedule hands msg to the courier for d.
func (c *Cluster) schedule(msg election.Message, d time.Duration) {
	if c.mail.Send(msg, d) != nil {
		c.stats.DroppedDown++ // the wheel is stopped: nothing is delivered any more
	}
}

// deliver is the courier's delivery of msg at its arrival.
func (c *Cluster) deliver(msg election.Message) {
	to := c.server(msg.To)
	if to == nil || !to.up {
		c.stats.DroppedDown++
		c.rpcDropped(msg)
		return
	}
	if from := c.server(msg.From); from != nil && c.cut[msg.From][msg.To] {
		c.stats.DroppedPartition++
		c.rpcDropped(msg)
		return
	}
	if c.cfg.Network.CancelBackoff > 0 && msg.Type.IsResponse() && !c.rpcReply(to, msg) {
		return // the reply of a cancelled RPC
	}
	if to.paused {
		c.stats.Held++
		to.queue = append(to.queue, queued{msg: msg})
		return
	}
	c.step(to, msg)
}

// step hands msg to its node.
func (c *Cluster) step(to *server, msg election.Message) {
	c.stats.Delivered++
	to.node.Step(msg)
}
