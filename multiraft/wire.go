package multiraft

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"

	"github.com/raftick/raftick/election"
)

// The wire format of a Batch between processes (docs/design.md, "The wire
// format of a Batch"). A frame is a fixed header and a body:
//
//	offset 0: version      1 byte  (WireVersion)
//	offset 1: body length  4 bytes, little endian
//	offset 5: CRC-32C      4 bytes, little endian, of the body only
//	offset 9: body
//
// The body of version 1, with uv an unsigned varint (encoding/binary's
// Uvarint), zz a zigzag varint (Varint) and b a byte:
//
//	uv From, uv To, b flags (1 Tick)
//	uv len(Msgs), uv len(Heartbeats), uv len(Responses), uv len(Controls)
//	Msgs:       uv Group, b Type, uv From, uv To, uv Term,
//	            uv LastLogIndex, uv LastLogTerm, b flags (1 Granted,
//	            2 Transfer), zz Priority, zz Sent
//	Heartbeats: zz Group-prev.Group, uv Term, zz Sent-prev.Sent
//	Responses:  zz Group-prev.Group, uv Term, b Granted, zz Sent-prev.Sent
//	Controls:   b Kind, uv Group, uv Term, b OK
//
// In Heartbeats and Responses each entry's Group and Sent are differences
// from the previous entry's in the same list (the first from 0), computed
// in uint64 arithmetic that wraps, so every value round-trips: a tick's
// batch, sent at one wheel time, spends one byte on Sent per entry.
// Sent and Priority are carried as they are; Sent is the sender's own
// wheel time and only the sender interprets it (it comes back echoed).
//
// Decoding refuses, with an error wrapping one of the ErrWire errors, an
// unknown version, a body longer than the reader's limit, a wrong
// checksum, a truncated frame, a count that the remaining bytes cannot
// hold, an overlong varint, a message type or control kind this version
// does not know, a flag or boolean byte other than the defined values,
// and trailing bytes. It never panics.

// WireVersion is the version of the wire format AppendBatch writes and
// DecodeBatch reads; a frame of any other version is refused with
// ErrWireVersion.
const WireVersion = 1

// FrameHeaderSize is the size of a frame's header: version, body length
// and checksum.
const FrameHeaderSize = 9

// MaxFrameBody is the largest body a frame can declare (the length field
// is 32 bits); readers set a lower limit of their own.
const MaxFrameBody = math.MaxUint32

// Errors of decoding a frame; the error returned wraps one of them.
var (
	ErrWireVersion   = errors.New("multiraft: unknown wire version")
	ErrWireTooLarge  = errors.New("multiraft: frame larger than the limit")
	ErrWireChecksum  = errors.New("multiraft: frame checksum mismatch")
	ErrWireTruncated = errors.New("multiraft: truncated frame")
	ErrWireMalformed = errors.New("multiraft: malformed frame")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Smallest encoded size of an entry of each list, in bytes: a count is
// refused if the rest of the body cannot hold that many entries, so a
// corrupt count allocates nothing.
const (
	minMsgSize       = 10
	minHeartbeatSize = 3
	minResponseSize  = 4
	minControlSize   = 4
)

// AppendBatch appends b's frame to dst and returns the extended slice.
// It allocates only to grow dst.
func AppendBatch(dst []byte, b *Batch) []byte {
	start := len(dst)
	dst = append(dst, WireVersion, 0, 0, 0, 0, 0, 0, 0, 0)
	dst = binary.AppendUvarint(dst, uint64(b.From))
	dst = binary.AppendUvarint(dst, uint64(b.To))
	var bflags byte
	if b.Tick {
		bflags |= 1
	}
	dst = append(dst, bflags)
	dst = binary.AppendUvarint(dst, uint64(len(b.Msgs)))
	dst = binary.AppendUvarint(dst, uint64(len(b.Heartbeats)))
	dst = binary.AppendUvarint(dst, uint64(len(b.Responses)))
	dst = binary.AppendUvarint(dst, uint64(len(b.Controls)))
	for i := range b.Msgs {
		gm := &b.Msgs[i]
		m := &gm.Msg
		dst = binary.AppendUvarint(dst, uint64(gm.Group))
		dst = append(dst, byte(m.Type))
		dst = binary.AppendUvarint(dst, uint64(m.From))
		dst = binary.AppendUvarint(dst, uint64(m.To))
		dst = binary.AppendUvarint(dst, m.Term)
		dst = binary.AppendUvarint(dst, m.LastLogIndex)
		dst = binary.AppendUvarint(dst, m.LastLogTerm)
		var flags byte
		if m.Granted {
			flags |= 1
		}
		if m.Transfer {
			flags |= 2
		}
		dst = append(dst, flags)
		dst = binary.AppendVarint(dst, int64(m.Priority))
		dst = binary.AppendVarint(dst, int64(m.Sent))
	}
	var group, sent uint64
	for i := range b.Heartbeats {
		e := &b.Heartbeats[i]
		dst = binary.AppendVarint(dst, int64(uint64(e.Group)-group))
		dst = binary.AppendUvarint(dst, e.Term)
		dst = binary.AppendVarint(dst, int64(uint64(e.Sent)-sent))
		group, sent = uint64(e.Group), uint64(e.Sent)
	}
	group, sent = 0, 0
	for i := range b.Responses {
		e := &b.Responses[i]
		dst = binary.AppendVarint(dst, int64(uint64(e.Group)-group))
		dst = binary.AppendUvarint(dst, e.Term)
		dst = append(dst, boolByte(e.Granted))
		dst = binary.AppendVarint(dst, int64(uint64(e.Sent)-sent))
		group, sent = uint64(e.Group), uint64(e.Sent)
	}
	for i := range b.Controls {
		c := &b.Controls[i]
		dst = append(dst, byte(c.Kind))
		dst = binary.AppendUvarint(dst, uint64(c.Group))
		dst = binary.AppendUvarint(dst, c.Term)
		dst = append(dst, boolByte(c.OK))
	}
	body := dst[start+FrameHeaderSize:]
	binary.LittleEndian.PutUint32(dst[start+1:], uint32(len(body)))
	binary.LittleEndian.PutUint32(dst[start+5:], crc32.Checksum(body, castagnoli))
	return dst
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// FrameBodyLen checks a frame's header (its first FrameHeaderSize bytes)
// and returns the length of the body that follows it. It refuses an
// unknown version (ErrWireVersion) and a body longer than limit bytes
// (ErrWireTooLarge); a stream reader reads the header, then the body,
// then calls DecodeBatch on both.
func FrameBodyLen(hdr []byte, limit int) (int, error) {
	if len(hdr) < FrameHeaderSize {
		return 0, fmt.Errorf("%w: header of %d bytes", ErrWireTruncated, len(hdr))
	}
	if hdr[0] != WireVersion {
		return 0, fmt.Errorf("%w: %d (this build reads %d)", ErrWireVersion, hdr[0], WireVersion)
	}
	n := uint64(binary.LittleEndian.Uint32(hdr[1:]))
	if n > uint64(max(limit, 0)) {
		return 0, fmt.Errorf("%w: body of %d bytes, limit %d", ErrWireTooLarge, n, limit)
	}
	return int(n), nil
}

// DecodeBatch decodes one whole frame (header and body, nothing after)
// into b, reusing b's slices: with enough capacity it allocates nothing.
// On error b holds an unspecified partial batch. It refuses bad input
// with an error wrapping an ErrWire error and never panics. Entries are
// not checked against a Host (unknown groups, wrong senders): Host.Step
// counts and ignores those.
func DecodeBatch(frame []byte, b *Batch) error {
	n, err := FrameBodyLen(frame, MaxFrameBody)
	if err != nil {
		return err
	}
	body := frame[FrameHeaderSize:]
	if len(body) < n {
		return fmt.Errorf("%w: body of %d bytes, header says %d", ErrWireTruncated, len(body), n)
	}
	if len(body) > n {
		return fmt.Errorf("%w: %d bytes after the body", ErrWireMalformed, len(body)-n)
	}
	if want, got := binary.LittleEndian.Uint32(frame[5:]), crc32.Checksum(body, castagnoli); want != got {
		return fmt.Errorf("%w: header %#08x, body %#08x", ErrWireChecksum, want, got)
	}
	d := decoder{buf: body}
	b.From = election.ID(d.uvarint())
	b.To = election.ID(d.uvarint())
	bflags := d.byte()
	if d.err == nil && bflags&^1 != 0 {
		d.fail(ErrWireMalformed, "batch flags %#x", bflags)
	}
	b.Tick = bflags&1 != 0
	nm := d.count(minMsgSize)
	nh := d.count(minHeartbeatSize)
	nr := d.count(minResponseSize)
	nc := d.count(minControlSize)
	// The four lists together must fit in what is left.
	if d.err == nil && nm*minMsgSize+nh*minHeartbeatSize+nr*minResponseSize+nc*minControlSize > len(d.buf)-d.off {
		d.fail(ErrWireMalformed, "counts %d+%d+%d+%d exceed the body", nm, nh, nr, nc)
	}
	if d.err != nil {
		return d.err
	}
	b.Msgs = resize(b.Msgs, nm)
	for i := range b.Msgs {
		gm := &b.Msgs[i]
		gm.Group = GroupID(d.uvarint())
		t := election.MsgType(d.byte())
		if d.err == nil && (t < election.MsgPreVote || t > election.MsgTimeoutNow) {
			d.fail(ErrWireMalformed, "message %d: type %d", i, t)
		}
		gm.Msg = election.Message{
			Type:         t,
			From:         election.ID(d.uvarint()),
			To:           election.ID(d.uvarint()),
			Term:         d.uvarint(),
			LastLogIndex: d.uvarint(),
			LastLogTerm:  d.uvarint(),
		}
		flags := d.byte()
		if d.err == nil && flags&^3 != 0 {
			d.fail(ErrWireMalformed, "message %d: flags %#x", i, flags)
		}
		gm.Msg.Granted, gm.Msg.Transfer = flags&1 != 0, flags&2 != 0
		p := d.varint()
		if d.err == nil && int64(int(p)) != p {
			d.fail(ErrWireMalformed, "message %d: priority %d overflows int", i, p)
		}
		gm.Msg.Priority = int(p)
		gm.Msg.Sent = time.Duration(d.varint())
	}
	var group, sent uint64
	b.Heartbeats = resize(b.Heartbeats, nh)
	for i := range b.Heartbeats {
		e := &b.Heartbeats[i]
		group += uint64(d.varint())
		e.Group = GroupID(group)
		e.Term = d.uvarint()
		sent += uint64(d.varint())
		e.Sent = time.Duration(sent)
	}
	group, sent = 0, 0
	b.Responses = resize(b.Responses, nr)
	for i := range b.Responses {
		e := &b.Responses[i]
		group += uint64(d.varint())
		e.Group = GroupID(group)
		e.Term = d.uvarint()
		e.Granted = d.bool("response", i)
		sent += uint64(d.varint())
		e.Sent = time.Duration(sent)
	}
	b.Controls = resize(b.Controls, nc)
	for i := range b.Controls {
		c := &b.Controls[i]
		k := ControlKind(d.byte())
		if d.err == nil && (k < Hibernate || k > Wake) {
			d.fail(ErrWireMalformed, "control %d: kind %d", i, k)
		}
		c.Kind = k
		c.Group = GroupID(d.uvarint())
		c.Term = d.uvarint()
		c.OK = d.bool("control", i)
	}
	if d.err == nil && d.off != len(d.buf) {
		d.fail(ErrWireMalformed, "%d bytes left after the last entry", len(d.buf)-d.off)
	}
	return d.err
}

// resize returns s with length n, reusing its array when it can; a nil
// s of length 0 stays nil.
func resize[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}

// decoder reads a body; after the first error every read returns zero and
// the error stays.
type decoder struct {
	buf []byte
	off int
	err error
}

func (d *decoder) fail(kind error, format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w at byte %d: %s", kind, FrameHeaderSize+d.off, fmt.Sprintf(format, args...))
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	// The common case, one byte, inline.
	if d.off < len(d.buf) && d.buf[d.off] < 0x80 {
		v := d.buf[d.off]
		d.off++
		return uint64(v)
	}
	v, n := binary.Uvarint(d.buf[d.off:])
	switch {
	case n == 0:
		d.fail(ErrWireTruncated, "varint")
		return 0
	case n < 0:
		d.fail(ErrWireMalformed, "varint overflows 64 bits")
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.buf) {
		d.fail(ErrWireTruncated, "byte")
		return 0
	}
	v := d.buf[d.off]
	d.off++
	return v
}

func (d *decoder) bool(what string, i int) bool {
	v := d.byte()
	if v > 1 && d.err == nil {
		d.fail(ErrWireMalformed, "%s %d: boolean byte %d", what, i, v)
	}
	return v == 1
}

// count reads a list's length and refuses one that the rest of the body
// cannot hold at min bytes per entry.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if d.err != nil {
		return 0
	}
	if left := uint64(len(d.buf) - d.off); n > left/uint64(min) {
		d.fail(ErrWireMalformed, "count %d exceeds the %d bytes left", n, left)
		return 0
	}
	return int(n)
}
