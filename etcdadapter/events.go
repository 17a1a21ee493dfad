package etcdadapter

import (
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/raftick/raftick/election"
)

// roleOf maps etcd's StateType to the election package's Role.
func roleOf(s raft.StateType) election.Role {
	switch s {
	case raft.StatePreCandidate:
		return election.PreCandidate
	case raft.StateCandidate:
		return election.Candidate
	case raft.StateLeader:
		return election.Leader
	}
	return election.Follower
}

// refresh syncs the timeout hook and reports the changes of etcd's state
// since the last refresh as events, in the election package's order:
// term change; step-down and role change; election start (with the
// candidate's vote for itself); leader elected; leader known. reason is
// why an election may have started (the work item that ran); hup reports
// that etcd's MsgHup ran, which is the only trace a pre-candidate leaves
// when it starts a new pre-vote round.
func (n *Node) refresh(reason string, hup bool) {
	if n.hook != nil {
		n.hook.sync()
	}
	bs := n.rn.BasicStatus()
	next := view{role: roleOf(bs.RaftState), term: bs.GetTerm(), vote: bs.GetVote(), leader: bs.Lead}
	prev := n.cur
	n.cur = next
	if reason == election.ReasonStart || (next == prev && !hup) || n.obs == nil {
		return
	}
	termUp := next.term > prev.term
	if termUp {
		r := election.ReasonHigherTerm
		if next.role == election.Candidate {
			r = campaignReason(prev.role, reason)
		}
		n.emit(election.EventTermChange, 0, r)
	}
	if next.role != prev.role {
		if next.role == election.Follower {
			r := stepDownReason(prev.role, next, termUp)
			n.emit(election.EventStepDown, 0, r)
			n.emit(election.EventRoleChange, 0, r)
		} else if next.role == election.Leader {
			n.emit(election.EventRoleChange, 0, election.ReasonWon)
		} else {
			n.emit(election.EventRoleChange, 0, campaignReason(prev.role, reason))
		}
	}
	switch {
	case next.role == election.PreCandidate && (prev.role != election.PreCandidate || hup):
		n.emitEvent(election.Event{Type: election.EventElectionStart, Term: next.term + 1, PreVote: true, Reason: orDefault(reason, election.ReasonCampaign)})
	case next.role == election.Candidate && (prev.role != election.Candidate || termUp):
		n.emit(election.EventElectionStart, 0, campaignReason(prev.role, reason))
		n.emit(election.EventVoteGranted, n.cfg.ID, election.ReasonSelf)
	case next.role == election.Leader && (prev.role != election.Leader || termUp):
		n.emit(election.EventLeaderElected, 0, "")
	case next.role == election.Follower && next.leader != 0 &&
		(next.leader != prev.leader || termUp || prev.role != election.Follower):
		n.emit(election.EventLeaderKnown, next.leader, "")
	}
}

// campaignReason says why a node became (pre-)candidate.
func campaignReason(prev election.Role, reason string) string {
	if prev == election.PreCandidate {
		return election.ReasonPreVoteWon
	}
	return orDefault(reason, election.ReasonCampaign)
}

// stepDownReason says why a node became follower.
func stepDownReason(prev election.Role, next view, termUp bool) string {
	switch {
	case termUp:
		return election.ReasonHigherTerm
	case prev == election.Leader:
		return election.ReasonCheckQuorum
	case next.leader != 0:
		return election.ReasonLeaderHB
	case prev == election.PreCandidate:
		return election.ReasonLostPreVote
	}
	return election.ReasonLostElection
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// voteEvents reports the node's answers to (pre-)vote requests found in
// the messages of a Ready. (A request etcd ignores, such as one that
// arrives within a CheckQuorum lease, gets no answer and no event.)
func (n *Node) voteEvents(msgs []*pb.Message) {
	if n.obs == nil {
		return
	}
	for _, m := range msgs {
		var req election.MsgType
		switch m.GetType() {
		case pb.MsgVoteResp:
			req = election.MsgVote
		case pb.MsgPreVoteResp:
			req = election.MsgPreVote
		default:
			continue
		}
		t, r := election.EventVoteGranted, ""
		if m.GetReject() {
			t, r = election.EventVoteDenied, "rejected"
		}
		n.emitEvent(election.Event{Type: t, Term: m.GetTerm(), Peer: election.ID(m.GetTo()), PreVote: req == election.MsgPreVote, Msg: req, Reason: r})
	}
}

func (n *Node) emit(t election.EventType, peer uint64, reason string) {
	n.emitEvent(election.Event{Type: t, Term: n.cur.term, Peer: election.ID(peer), Reason: reason})
}

// emitEvent fills in At, Node, Role, Leader and Seq and queues e for the
// observer.
func (n *Node) emitEvent(e election.Event) {
	if n.obs == nil {
		return
	}
	n.seq++
	e.At, e.Node, e.Role, e.Leader, e.Seq = n.w.Now(), election.ID(n.cfg.ID), n.cur.role, election.ID(n.cur.leader), n.seq
	n.events = append(n.events, e)
}
