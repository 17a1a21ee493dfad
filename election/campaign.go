package election

import (
	"fmt"
)

// Campaign starts an election now, as if the election timer had fired but
// without the priority check: with PreVote a pre-vote round, otherwise a
// new term. It returns ErrNotStarted, ErrStopped or ErrIsLeader.
//
// Where a lease is offered (CheckQuorum or LeaderStickiness), a node that
// heard a leader within ElectionTimeout (or started less than
// ElectionTimeout ago in a term above 0) has promised that leader's lease
// not to help elect another leader (see QuorumContact), its own vote
// included: without PreVote Campaign then returns ErrLeaderAlive, and with
// PreVote it runs the pre-vote, but a pre-vote won within that time ends
// without a new term. To move leadership to a node at once, call
// TransferLeadership on the leader.
func (n *Node) Campaign() error {
	if err := n.lockUsable(); err != nil {
		return err
	}
	if n.role == Leader {
		n.mu.Unlock()
		return ErrIsLeader
	}
	if !n.cfg.PreVote && n.promiseForbidsCampaign() {
		n.mu.Unlock()
		return ErrLeaderAlive
	}
	if n.term >= MaxTerm {
		n.refuseRound(ReasonCampaign) // a candidate keeps its round
		n.unlockAndFlush()
		return fmt.Errorf("election: Campaign in term %d: %w", n.term, ErrTermExhausted)
	}
	n.startElection(ReasonCampaign)
	n.unlockAndFlush()
	return nil
}

// TransferLeadership asks voter to to take over: the leader sends it
// MsgTimeoutNow, and to campaigns at once in a new term, skipping pre-vote
// and priority, with vote requests marked Transfer (which bypass leader
// stickiness). The leader keeps leading until the higher term deposes it.
// Transferring to itself does nothing. It returns ErrNotStarted,
// ErrStopped, ErrNotLeader or ErrUnknownNode.
func (n *Node) TransferLeadership(to ID) error {
	if err := n.lockUsable(); err != nil {
		return err
	}
	if n.role != Leader {
		n.mu.Unlock()
		return ErrNotLeader
	}
	if !n.isVoter(to) {
		n.mu.Unlock()
		return fmt.Errorf("%w: %d is not a voter", ErrUnknownNode, to)
	}
	if to != n.id && n.term >= MaxTerm {
		n.mu.Unlock()
		return fmt.Errorf("election: TransferLeadership in term %d: %w", n.term, ErrTermExhausted)
	}
	if to != n.id {
		n.transferring = true
		n.logger.Debug("transferring leadership", "to", to, "term", n.term)
		n.send(Message{Type: MsgTimeoutNow, To: to, Term: n.term})
	}
	n.unlockAndFlush()
	return nil
}

// allowLaunchElection implements SOFAJRaft's priority rule: a node below
// the target priority skips one election timeout, and every second skip
// decays the target.
func (n *Node) allowLaunchElection() bool {
	p := n.cfg.Priority
	if p == 0 {
		return true
	}
	if p < n.targetPriority {
		n.priorityCounter++
		if n.priorityCounter > 1 {
			gap := max(n.cfg.PriorityDecayGap, n.targetPriority/5)
			n.targetPriority = max(1, n.targetPriority-gap)
			n.priorityCounter = 0
			n.logger.Debug("decayed target priority", "target", n.targetPriority)
		}
		if n.priorityCounter == 1 {
			return false
		}
	}
	return p >= n.targetPriority
}

func (n *Node) resetPriority() {
	n.targetPriority = n.cfg.targetPriority()
	n.priorityCounter = 0
}

func (n *Node) startElection(reason string) {
	if n.cfg.PreVote {
		n.becomePreCandidate(reason)
	} else {
		n.becomeCandidate(reason, false)
	}
}

func (n *Node) becomePreCandidate(reason string) {
	if n.termExhausted(reason) {
		return
	}
	n.leader = None
	n.setRole(PreCandidate, reason)
	n.votes.Reset(n.majority, n.id)
	n.restartElectionTimer(0)
	n.stats.PreVotes++
	n.emitEvent(Event{Type: EventElectionStart, Term: n.term + 1, Reason: reason, PreVote: true})
	idx, lt := n.lv.Last()
	for _, p := range n.peers {
		n.send(Message{Type: MsgPreVote, To: p, Term: n.term + 1, LastLogIndex: idx, LastLogTerm: lt, Priority: n.cfg.Priority})
	}
	if n.majority.Size() <= 1 {
		n.becomeCandidate(ReasonPreVoteWon, false)
	}
}

func (n *Node) becomeCandidate(reason string, transfer bool) {
	if n.termExhausted(reason) {
		return
	}
	term := n.term + 1
	if !n.persist(HardState{Term: term, Vote: n.id}, None) {
		// Could not vote for ourselves: stay (or become) a follower and
		// retry at the next election timeout.
		if n.role != Follower {
			n.stepDown(n.term, ReasonStorage, None)
		}
		return
	}
	n.term, n.vote, n.leader = term, n.id, None
	n.emit(EventTermChange, None, reason)
	counts := true
	if n.cfg.Emulate.BackoffOnRejections && n.role == Candidate {
		_, rejected := n.votes.Tally() // the previous round's
		counts = 2*rejected >= len(n.peers)
	}
	n.setRole(Candidate, reason)
	n.votes.Reset(n.majority, n.id)
	n.stopElectionTimer()
	if counts {
		n.voteJ.beginRound()
	}
	n.voteT.Restart()
	n.stats.Elections++
	n.emit(EventElectionStart, None, reason)
	n.emit(EventVoteGranted, n.id, ReasonSelf)
	idx, lt := n.lv.Last()
	for _, p := range n.peers {
		n.send(Message{Type: MsgVote, To: p, Term: term, LastLogIndex: idx, LastLogTerm: lt, Transfer: transfer, Priority: n.cfg.Priority})
	}
	if n.majority.Size() <= 1 {
		n.becomeLeader()
	}
}

func (n *Node) deny(m Message, respType MsgType, reason string, prevote bool) {
	if n.logger.IsTrace() {
		n.logger.Trace("vote denied", "msg", m.String(), "reason", reason)
	}
	n.emitEvent(Event{Type: EventVoteDenied, Term: m.Term, Peer: m.From, Reason: reason, PreVote: prevote, Msg: m.Type})
	n.send(Message{Type: respType, To: m.From, Term: n.term})
}

func (n *Node) handlePreVote(m Message) {
	switch {
	case m.Term < n.term:
		n.stats.IgnoredStale++
		n.deny(m, MsgPreVoteResp, ReasonStale, true)
		return
	case n.loyal(m.From):
		n.stats.LeaseRejections++
		n.deny(m, MsgPreVoteResp, n.loyalReason(ReasonLeaderAlive), true)
		return
	}
	canVote := m.Term > n.term || n.vote == m.From || (n.vote == None && n.leader == None)
	if !canVote {
		n.deny(m, MsgPreVoteResp, ReasonAlreadyVoted, true)
		return
	}
	if !n.logOK(m) {
		n.deny(m, MsgPreVoteResp, ReasonLogBehind, true)
		return
	}
	n.emitEvent(Event{Type: EventVoteGranted, Term: m.Term, Peer: m.From, PreVote: true, Msg: m.Type})
	n.send(Message{Type: MsgPreVoteResp, To: m.From, Term: m.Term, Granted: true})
}

func (n *Node) handlePreVoteResp(m Message) {
	if m.Term > n.term && !m.Granted {
		n.stepDown(m.Term, ReasonHigherTerm, m.From)
		return
	}
	switch {
	case m.Term < n.term:
		// A late answer of an earlier round, grant or rejection.
		n.ignore(m, &n.stats.IgnoredStale, ReasonStale)
		return
	case n.role != PreCandidate:
		n.ignore(m, &n.stats.IgnoredOther, ReasonUnexpected)
		return
	case m.Granted && m.Term != n.term+1:
		// A grant for another round's term.
		n.ignore(m, &n.stats.IgnoredStale, ReasonStale)
		return
	}
	// Pre-vote rounds of one term cannot be told apart: a late answer of an
	// earlier round counts in this one. That only affects liveness; votes
	// decide safety.
	granted, rejected, fresh := n.recordAnswer(m)
	switch {
	case !fresh:
	case n.majority.Reached(granted) && n.promiseForbidsCampaign():
		// Won, but its own vote is promised to a leader's lease.
		n.stepDown(n.term, ReasonLeaderAlive, None)
	case n.majority.Reached(granted):
		n.becomeCandidate(ReasonPreVoteWon, false)
	case n.cannotWin(rejected):
		n.stepDown(n.term, ReasonLostPreVote, None)
	}
}

func (n *Node) handleVote(m Message) {
	if m.Term < n.term {
		n.stats.IgnoredStale++
		n.deny(m, MsgVoteResp, ReasonStale, false)
		return
	}
	if n.cfg.refusesVotesInLease() && !m.Transfer && n.loyal(m.From) {
		n.stats.LeaseRejections++
		n.deny(m, MsgVoteResp, n.loyalReason(ReasonLease), false)
		return
	}
	if m.Term > n.term {
		// New term: no vote and no leader in it yet, so the log decides.
		// Term and vote go to storage in one Save.
		grant := n.logOK(m)
		deposed := n.cfg.Emulate.GrantOnlyAsFollower && n.role != Follower
		grant = grant && !deposed
		vote := None
		if grant {
			vote = m.From
		}
		if !n.stepDownVoting(m.Term, vote, ReasonHigherTerm, m.From) {
			return
		}
		if !grant {
			reason := ReasonLogBehind
			if deposed {
				reason = ReasonDeposed
			}
			n.deny(m, MsgVoteResp, reason, false)
			return
		}
		n.delayRearmForTermWrite() // Config.Emulate.ServerLock: re-arm once the term is durable
		n.grantVote(m)
		n.clearRearmDelay()
		return
	}
	switch {
	case n.vote != m.From && n.vote != None:
		n.deny(m, MsgVoteResp, fmt.Sprintf("%s for %d", ReasonAlreadyVoted, n.vote), false)
		return
	case n.vote == None && n.leader != None:
		n.deny(m, MsgVoteResp, ReasonLeaderKnown, false)
		return
	case !n.logOK(m):
		n.deny(m, MsgVoteResp, ReasonLogBehind, false)
		return
	}
	if n.vote != m.From {
		if !n.persist(HardState{Term: n.term, Vote: m.From}, m.From) {
			return // no reply: the vote is not durable
		}
		n.vote = m.From
	}
	n.grantVote(m)
}

// grantVote answers a vote request whose grant is persisted.
func (n *Node) grantVote(m Message) {
	n.resetElectionTimer(n.w.Now())
	n.emitEvent(Event{Type: EventVoteGranted, Term: n.term, Peer: m.From, Msg: m.Type})
	n.send(Message{Type: MsgVoteResp, To: m.From, Term: n.term, Granted: true})
}

func (n *Node) handleVoteResp(m Message) {
	switch {
	case m.Term > n.term:
		n.stepDown(m.Term, ReasonHigherTerm, m.From)
		return
	case m.Term < n.term:
		n.ignore(m, &n.stats.IgnoredStale, ReasonStale)
		return
	case n.role != Candidate:
		n.ignore(m, &n.stats.IgnoredOther, ReasonUnexpected)
		return
	}
	granted, rejected, fresh := n.recordAnswer(m)
	switch {
	case !fresh:
	case n.majority.Reached(granted):
		n.becomeLeader()
	case n.cannotWin(rejected) && !n.cfg.Emulate.WaitForVoteTimeout:
		n.stepDown(n.term, ReasonLostElection, None)
	}
}

// recordAnswer records a peer's answer to this round's (pre-)vote requests
// and returns the tally; a second answer from the same peer changes nothing
// and reports fresh == false.
func (n *Node) recordAnswer(m Message) (granted, rejected int, fresh bool) {
	if !n.votes.Record(m.From, m.Granted) {
		return 0, 0, false
	}
	granted, rejected = n.votes.Tally()
	return granted, rejected, true
}

// cannotWin reports whether so many voters rejected this round that it can
// no longer reach a quorum.
func (n *Node) cannotWin(rejected int) bool {
	return n.majority.Lost(rejected)
}

func (n *Node) handleTimeoutNow(m Message) {
	switch {
	case m.Term < n.term:
		n.ignore(m, &n.stats.IgnoredStale, ReasonStale)
		return
	case n.role == Leader && m.Term == n.term:
		n.ignore(m, &n.stats.IgnoredOther, ReasonUnexpected)
		return
	}
	if m.Term > n.term && !n.stepDown(m.Term, ReasonHigherTerm, m.From) {
		return
	}
	n.logger.Debug("leadership transfer requested", "by", m.From, "term", n.term)
	n.becomeCandidate(ReasonTransfer, true)
}
