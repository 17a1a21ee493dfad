package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
)

// record is one line of the event log. Type is an election.EventType's
// name, "Recovered" for the hard state a group loaded at startup, or
// "Durable" for one written durably (logged after the write returned and
// before anything that depends on it is sent); both carry the vote in
// Leader.
type record struct {
	T      int64       `json:"t"` // wall clock, Unix nanoseconds
	Node   election.ID `json:"node"`
	Group  uint64      `json:"g"`
	Type   string      `json:"type"`
	Term   uint64      `json:"term"`
	Role   uint8       `json:"role,omitempty"`
	Leader election.ID `json:"leader,omitempty"`
	Peer   election.ID `json:"peer,omitempty"`
	Reason string      `json:"reason,omitempty"`
	// PreVote marks a pre-vote granted (it changes no state).
	PreVote bool `json:"prevote,omitempty"`
}

const (
	typeRecovered = "Recovered"
	typeDurable   = "Durable"
)

// logged reports whether e goes into the event log: what the election
// checker needs (terms, votes, leaders), elections started, leaders
// stepping down (with their reasons) and pre-votes granted; other
// pre-vote events and ignored messages stay out.
func logged(e election.Event) bool {
	if e.PreVote {
		// Who granted a pre-vote says why an election started.
		return e.Type == election.EventVoteGranted
	}
	switch e.Type {
	case election.EventTermChange, election.EventVoteGranted, election.EventLeaderElected,
		election.EventLeaderKnown, election.EventElectionStart, election.EventStepDown:
		return true
	case election.EventRoleChange:
		return e.Role == election.Leader
	}
	return false
}

// eventLog appends records to a file, one write per record, so that a
// record is in the kernel (and survives a kill -9) before the message it
// precedes leaves the process.
type eventLog struct {
	mu  sync.Mutex
	f   *os.File // nil: discard
	buf []byte
	err error // the first write error
}

func openEventLog(path string) (*eventLog, error) {
	if path == "-" {
		return &eventLog{}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("event log: %w", err)
	}
	return &eventLog{f: f}, nil
}

// write appends rs to the log in one write.
func (l *eventLog) write(rs ...record) {
	if l.f == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buf[:0]
	for _, r := range rs {
		b = appendRecord(b, r)
	}
	l.buf = b
	if _, err := l.f.Write(b); err != nil && l.err == nil {
		l.err = err
	}
}

// appendRecord appends r as a JSON line (the fields of record's tags).
func appendRecord(b []byte, r record) []byte {
	b = append(b, `{"t":`...)
	b = strconv.AppendInt(b, r.T, 10)
	b = append(b, `,"node":`...)
	b = strconv.AppendUint(b, uint64(r.Node), 10)
	b = append(b, `,"g":`...)
	b = strconv.AppendUint(b, r.Group, 10)
	b = append(b, `,"type":"`...)
	b = append(b, r.Type...)
	b = append(b, `","term":`...)
	b = strconv.AppendUint(b, r.Term, 10)
	if r.Role != 0 {
		b = append(b, `,"role":`...)
		b = strconv.AppendUint(b, uint64(r.Role), 10)
	}
	if r.Leader != 0 {
		b = append(b, `,"leader":`...)
		b = strconv.AppendUint(b, uint64(r.Leader), 10)
	}
	if r.Peer != 0 {
		b = append(b, `,"peer":`...)
		b = strconv.AppendUint(b, uint64(r.Peer), 10)
	}
	if r.Reason != "" {
		b = append(b, `,"reason":`...)
		b = strconv.AppendQuote(b, r.Reason)
	}
	if r.PreVote {
		b = append(b, `,"prevote":true`...)
	}
	return append(b, "}\n"...)
}

func (l *eventLog) event(g multiraft.GroupID, e election.Event) {
	r := record{T: time.Now().UnixNano(), Node: e.Node, Group: uint64(g), Type: e.Type.String(),
		Term: e.Term, Role: uint8(e.Role), Leader: e.Leader, Peer: e.Peer, PreVote: e.PreVote}
	switch e.Type {
	case election.EventRoleChange, election.EventElectionStart, election.EventStepDown:
		r.Reason = e.Reason
	}
	l.write(r)
}

func (l *eventLog) close() error {
	if l.f == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.f.Close()
	if l.err != nil {
		return fmt.Errorf("event log: %w", l.err)
	}
	return err
}

// eventTypes maps the log's type names back to event types.
var eventTypes = func() map[string]election.EventType {
	m := map[string]election.EventType{}
	for t := election.EventRoleChange; t <= election.EventSnapshot; t++ {
		m[t.String()] = t
	}
	return m
}()

// readEvents reads an event log, calling f for each record. A last line
// cut short (the process was killed while writing it) is skipped.
func readEvents(r io.Reader, f func(record) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	var pending []byte
	for sc.Scan() {
		line++
		if pending != nil {
			return fmt.Errorf("line %d: cannot parse: %q", line-1, pending)
		}
		var rec record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			pending = append([]byte(nil), sc.Bytes()...)
			continue
		}
		if err := f(rec); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
	return sc.Err()
}

// toEvent converts a record other than Recovered and Durable to an
// election.Event.
func toEvent(r record) (election.Event, error) {
	t, ok := eventTypes[r.Type]
	if !ok {
		return election.Event{}, fmt.Errorf("unknown event type %q", r.Type)
	}
	return election.Event{Node: r.Node, Type: t, Term: r.Term, Role: election.Role(r.Role),
		Leader: r.Leader, Peer: r.Peer, Reason: r.Reason, PreVote: r.PreVote}, nil
}
