package multiraft

import "time"

// Stats counts what a Host did.
type Stats struct {
	// Groups is the number of groups; Hibernating how many of them sleep.
	Groups, Hibernating int64
	// Hibernations and Wakes count transitions to and from sleep;
	// LivenessWakes counts the hibernating groups woken by failover (their
	// leader's node fell silent and this host was their first voter
	// alive; each campaigned at once), HibernateRefused the groups woken
	// again because a follower refused to hibernate. LivenessCampaigns
	// counts the awake groups that campaigned at once because their
	// leader's node fell silent and this host was their first voter
	// alive.
	Hibernations, Wakes, LivenessWakes, HibernateRefused, LivenessCampaigns int64
	// A failover's progress (see the package documentation, # Node
	// liveness): FailoverQueued is how many hibernating groups wait now
	// for this host to wake them, FailoverInFlight how many it woke that
	// know no leader yet (at most Config.FailoverInFlight).
	// FailoverDropped counts the queued groups left asleep because their
	// leader's node was heard again, FailoverExpired the woken groups
	// that still knew no leader after three election timeouts and gave
	// their place to the next.
	FailoverQueued, FailoverInFlight, FailoverDropped, FailoverExpired int64
	// AnsweredAsleep counts heartbeats answered by hibernating followers
	// without waking; IgnoredAsleep late answers dropped by hibernating
	// replicas.
	AnsweredAsleep, IgnoredAsleep int64
	// WakeFailures counts wakes for a Touch that the host made after
	// Touch returned (it was busy) and that failed (see Touch).
	WakeFailures int64
	// PeersDown and PeersUp count liveness verdicts; LivenessHolds the
	// verdicts put off once because the host had not been stepping other
	// peers' batches for half a liveness timeout since the silent one's
	// last (see onPeerSilent).
	PeersDown, PeersUp, LivenessHolds int64
	// BatchesReceived counts inbound batches; Delivered the election
	// messages stepped into groups; Ignored the entries dropped (unknown
	// group or sender, wrong recipient, malformed).
	BatchesReceived, Delivered, Ignored int64
	// Messages counts outbound election and control messages before
	// coalescing; Batches the batches handed to the Transport (after);
	// Coalesced the heartbeats and answers that waited in an outbox;
	// Liveness the empty liveness batches.
	Messages, Batches, Coalesced, Liveness int64
	// Batches by why they left: TickBatches after the heartbeat tick,
	// AnswerBatches at the end of a Step that delivered heartbeats (its
	// answers), LooseBatches with entries no tick or Step in progress made
	// (a leader just elected or woken),
	// sent by the coalescing window's timer or at the end of a Step,
	// ControlBatches with a hibernation control, DirectBatches single
	// messages sent at once (votes, or everything without Coalesce). With
	// Liveness they add up to Batches. In steady state with Coalesce only
	// TickBatches and AnswerBatches grow: one each per peer pair and tick.
	TickBatches, AnswerBatches, LooseBatches, ControlBatches, DirectBatches int64

	// Behind reports that the host runs late: one of its periodic checks
	// (every heartbeat interval) ran more than half an interval after its
	// deadline, and they have not run on time since for an election
	// timeout. Lateness is how late the last check ran, MaxLateness the
	// most any did; BehindSpells counts the times the host fell behind.
	// They measure; nothing is held on them. LaggingSkips counts the
	// silences the nodes' election.Config.Lagging held: a leader's, a
	// voter's in a round or under CheckQuorum, judged by what the host has
	// processed from the peer's host (see overload.go).
	Behind                     bool
	Lateness, MaxLateness      time.Duration
	BehindSpells, LaggingSkips int64

	// Saves counts the HardStates written durably (to the Store, or a
	// group's own Storage); Syncs the durable writes that took them (one
	// Store.Save for many groups, or one Storage.Save each); SaveErrors
	// the writes that failed (and are retried; the messages waiting for
	// them stay held).
	Saves, Syncs, SaveErrors int64
}

// Stats returns the host's counters.
func (h *Host) Stats() Stats {
	h.lock()
	s := h.stats
	s.Lateness, s.MaxLateness = h.lateness, h.maxLateness
	h.unlock()
	s.Behind, s.LaggingSkips = h.behind.Load(), h.laggingSkips.Load()
	s.Saves, s.Syncs, s.SaveErrors = h.saves.Load(), h.syncs.Load(), h.saveErrors.Load()
	h.outMu.Lock()
	var sum outStats
	for _, ob := range *h.outs.Load() {
		ob.mu.Lock()
		sum.add(&ob.stats)
		ob.mu.Unlock()
	}
	o := &sum
	s.Messages, s.Batches, s.Coalesced, s.Liveness = o.messages, o.batches, o.heartbeats, o.liveness
	s.TickBatches, s.AnswerBatches, s.LooseBatches, s.ControlBatches, s.DirectBatches = o.tick, o.answer, o.loose, o.control, o.direct
	h.outMu.Unlock()
	return s
}
