package multiraft_test

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
)

// wireSamples are batches that exercise every field, extreme values
// included.
func wireSamples() []multiraft.Batch {
	return []multiraft.Batch{
		{From: 1, To: 2}, // liveness
		{From: 3, To: 1, Tick: true, Heartbeats: []multiraft.Heartbeat{{Group: 7, Term: 4, Sent: 150 * time.Millisecond}, {Group: 8, Term: 4, Sent: 150 * time.Millisecond}, {Group: 2, Term: 9, Sent: 0}}},
		{From: 2, To: 3, Responses: []multiraft.HeartbeatResponse{{Group: 1, Term: 1, Granted: true, Sent: 5}, {Group: math.MaxUint64, Term: math.MaxUint64, Sent: math.MinInt64}, {Group: 0, Term: 0, Granted: true, Sent: math.MaxInt64}}},
		{From: math.MaxUint64, To: 1, Msgs: []multiraft.GroupMessage{
			{Group: 9, Msg: election.Message{Type: election.MsgVote, From: math.MaxUint64, To: 1, Term: 12, LastLogIndex: 100, LastLogTerm: 11, Transfer: true, Priority: -5}},
			{Group: 10, Msg: election.Message{Type: election.MsgPreVoteResp, From: 1, To: 2, Term: math.MaxUint64, Granted: true, Priority: math.MinInt, Sent: -1}},
			{Group: 11, Msg: election.Message{Type: election.MsgTimeoutNow, Priority: math.MaxInt}},
		}},
		{From: 1, To: 2, Controls: []multiraft.Control{{Kind: multiraft.Hibernate, Group: 3, Term: 4}, {Kind: multiraft.HibernateAck, Group: 3, Term: 4, OK: true}, {Kind: multiraft.Wake, Group: math.MaxUint64, Term: 1}}},
		{From: 1, To: 2,
			Msgs:       []multiraft.GroupMessage{{Group: 1, Msg: election.Message{Type: election.MsgHeartbeat, From: 1, To: 2, Term: 3, Sent: 77}}},
			Heartbeats: []multiraft.Heartbeat{{Group: 5, Term: 3, Sent: 99}},
			Responses:  []multiraft.HeartbeatResponse{{Group: 6, Term: 2, Sent: 98}},
			Controls:   []multiraft.Control{{Kind: multiraft.Wake, Group: 6, Term: 2}},
		},
	}
}

// normalize makes empty lists nil, so that decoded and original batches
// compare equal.
func normalize(b multiraft.Batch) multiraft.Batch {
	if len(b.Msgs) == 0 {
		b.Msgs = nil
	}
	if len(b.Heartbeats) == 0 {
		b.Heartbeats = nil
	}
	if len(b.Responses) == 0 {
		b.Responses = nil
	}
	if len(b.Controls) == 0 {
		b.Controls = nil
	}
	return b
}

// TestWireSamplesCoverBatch: every field of Batch is set in some sample,
// so that a field added to Batch without a place on the wire fails
// TestWireRoundTrip instead of vanishing between processes.
func TestWireSamplesCoverBatch(t *testing.T) {
	typ := reflect.TypeFor[multiraft.Batch]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		set := false
		for _, b := range wireSamples() {
			set = set || !reflect.ValueOf(b).Field(i).IsZero()
		}
		require.True(t, set, "no sample sets Batch.%s: add one (and the field to the wire format)", f.Name)
	}
}

func TestWireRoundTrip(t *testing.T) {
	var got multiraft.Batch
	for i, b := range wireSamples() {
		frame := multiraft.AppendBatch(nil, &b)
		require.NoError(t, multiraft.DecodeBatch(frame, &got), "sample %d", i)
		require.Equal(t, normalize(b), normalize(got), "sample %d", i)
		// Into a batch that held something else.
		got = wireSamples()[5]
		require.NoError(t, multiraft.DecodeBatch(frame, &got), "sample %d", i)
		require.Equal(t, normalize(b), normalize(got), "sample %d", i)
	}
}

// TestWireStream: frames appended one after another are read back with
// FrameBodyLen and DecodeBatch, as a stream reader does.
func TestWireStream(t *testing.T) {
	var buf []byte
	samples := wireSamples()
	for i := range samples {
		buf = multiraft.AppendBatch(buf, &samples[i])
	}
	var got multiraft.Batch
	for i := range samples {
		n, err := multiraft.FrameBodyLen(buf, 1<<20)
		require.NoError(t, err)
		require.NoError(t, multiraft.DecodeBatch(buf[:multiraft.FrameHeaderSize+n], &got))
		require.Equal(t, normalize(samples[i]), normalize(got))
		buf = buf[multiraft.FrameHeaderSize+n:]
	}
	require.Empty(t, buf)
}

// TestWireRefuses: every truncation, every flipped byte, an unknown
// version, a frame over the limit and trailing bytes are refused with the
// right error.
func TestWireRefuses(t *testing.T) {
	var got multiraft.Batch
	for i, b := range wireSamples() {
		frame := multiraft.AppendBatch(nil, &b)
		for n := range len(frame) {
			err := multiraft.DecodeBatch(frame[:n], &got)
			require.ErrorIs(t, err, multiraft.ErrWireTruncated, "sample %d cut at %d", i, n)
		}
		for at := range len(frame) {
			bad := append([]byte(nil), frame...)
			bad[at] ^= 0x40
			err := multiraft.DecodeBatch(bad, &got)
			require.Error(t, err, "sample %d, byte %d flipped", i, at)
			switch {
			case at == 0:
				require.ErrorIs(t, err, multiraft.ErrWireVersion)
			case at < 5:
				require.True(t, errors.Is(err, multiraft.ErrWireTruncated) || errors.Is(err, multiraft.ErrWireMalformed), "%v", err)
			default:
				require.ErrorIs(t, err, multiraft.ErrWireChecksum, "sample %d, byte %d flipped", i, at)
			}
		}
		err := multiraft.DecodeBatch(append(frame, 0), &got)
		require.ErrorIs(t, err, multiraft.ErrWireMalformed)
		_, err = multiraft.FrameBodyLen(frame, len(frame)-multiraft.FrameHeaderSize-1)
		require.ErrorIs(t, err, multiraft.ErrWireTooLarge)
	}
}

// reseal rewrites a frame's length and checksum after its body changed,
// so the test reaches the body's own checks.
func reseal(frame []byte) []byte {
	body := frame[multiraft.FrameHeaderSize:]
	binary.LittleEndian.PutUint32(frame[1:], uint32(len(body)))
	binary.LittleEndian.PutUint32(frame[5:], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	return frame
}

// TestWireRefusesBadBody: bodies with a valid checksum but bad contents.
func TestWireRefusesBadBody(t *testing.T) {
	hdr := []byte{multiraft.WireVersion, 0, 0, 0, 0, 0, 0, 0, 0}
	body := func(bs ...byte) []byte { return reseal(append(append([]byte(nil), hdr...), bs...)) }
	msg := func(typ, flags byte) []byte {
		return body(1, 2, 0, 1, 0, 0, 0, 9, typ, 1, 2, 3, 0, 0, flags, 0, 0)
	}
	cases := map[string][]byte{
		"empty body":           body(),
		"huge count":           body(1, 2, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0),
		"counts exceed body":   body(1, 2, 0, 0, 3, 0, 0, 1, 1, 1, 1, 1, 1),
		"overlong varint":      body(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 2, 0, 0, 0, 0),
		"message type 0":       msg(0, 0),
		"message type 8":       msg(8, 0),
		"message flags 4":      msg(byte(election.MsgVote), 4),
		"control kind 0":       body(1, 2, 0, 0, 0, 0, 1, 0, 1, 1, 0),
		"control kind 4":       body(1, 2, 0, 0, 0, 0, 1, 4, 1, 1, 0),
		"control OK 2":         body(1, 2, 0, 0, 0, 0, 1, 1, 1, 1, 2),
		"response granted 2":   body(1, 2, 0, 0, 0, 1, 0, 2, 1, 2, 0),
		"trailing after lists": body(1, 2, 0, 0, 0, 0, 0, 0),
		"batch flags 2":        body(1, 2, 2, 0, 0, 0, 0),
		"truncated entry":      body(1, 2, 0, 0, 1, 0, 0, 2, 0x80, 0x80),
	}
	var got multiraft.Batch
	for name, frame := range cases {
		err := multiraft.DecodeBatch(frame, &got)
		require.Error(t, err, name)
		require.True(t, errors.Is(err, multiraft.ErrWireMalformed) || errors.Is(err, multiraft.ErrWireTruncated), "%s: %v", name, err)
	}
	// A valid message for contrast: the cases above differ from it only
	// where named.
	require.NoError(t, multiraft.DecodeBatch(msg(byte(election.MsgVote), 3), &got))
}

// TestWireDecodeAllocs: decoding into a reused Batch allocates nothing.
func TestWireDecodeAllocs(t *testing.T) {
	b := heartbeatBatch(1000)
	frame := multiraft.AppendBatch(nil, &b)
	var got multiraft.Batch
	require.NoError(t, multiraft.DecodeBatch(frame, &got))
	allocs := testing.AllocsPerRun(100, func() {
		if err := multiraft.DecodeBatch(frame, &got); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
	buf := make([]byte, 0, len(frame))
	allocs = testing.AllocsPerRun(100, func() { buf = multiraft.AppendBatch(buf[:0], &b) })
	require.Zero(t, allocs)
}

// heartbeatBatch is a tick's batch of n heartbeats (and a mix of answers
// in Responses), as a leader host sends a peer: groups in leading order,
// one Sent, terms of a few values.
func heartbeatBatch(n int) multiraft.Batch {
	r := rand.New(rand.NewPCG(1, 2))
	b := multiraft.Batch{From: 1, To: 2, Heartbeats: make([]multiraft.Heartbeat, n), Responses: make([]multiraft.HeartbeatResponse, n)}
	g := uint64(1)
	for i := range n {
		g += 1 + r.Uint64N(3)
		term := 1 + r.Uint64N(5)
		b.Heartbeats[i] = multiraft.Heartbeat{Group: multiraft.GroupID(g), Term: term, Sent: 3_600 * time.Second}
		b.Responses[i] = multiraft.HeartbeatResponse{Group: multiraft.GroupID(g), Term: term, Granted: true, Sent: 3_600 * time.Second}
	}
	return b
}

func FuzzDecodeBatch(f *testing.F) {
	for _, b := range wireSamples() {
		f.Add(multiraft.AppendBatch(nil, &b))
	}
	hb := heartbeatBatch(20)
	f.Add(multiraft.AppendBatch(nil, &hb))
	f.Add([]byte{})
	f.Add([]byte{multiraft.WireVersion, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
		// Mutated bodies rarely keep their checksum: also decode the
		// input with its header made right, so the body's parser is
		// fuzzed too.
		if len(data) >= multiraft.FrameHeaderSize {
			sealed := reseal(append([]byte(nil), data...))
			sealed[0] = multiraft.WireVersion
			checkDecode(t, sealed)
		}
	})
}

// checkDecode decodes data and, if it decodes, checks that the batch
// re-encodes to a frame no longer than data that decodes to the same
// batch.
func checkDecode(t *testing.T, data []byte) {
	var b multiraft.Batch
	if err := multiraft.DecodeBatch(data, &b); err != nil {
		return
	}
	// What decodes encodes and decodes to the same batch.
	again := multiraft.AppendBatch(nil, &b)
	var b2 multiraft.Batch
	if err := multiraft.DecodeBatch(again, &b2); err != nil {
		t.Fatalf("re-encoded frame refused: %v", err)
	}
	if len(again) > len(data) {
		t.Fatalf("re-encoding grew %d -> %d bytes", len(data), len(again))
	}
	require.Equal(t, normalize(b), normalize(b2))
}
