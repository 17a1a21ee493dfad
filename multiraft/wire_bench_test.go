package multiraft_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
)

// The protobuf rival of the wire format, for BenchmarkWire: the same
// frame header around a proto3 body of this schema, written and parsed
// with protowire (protobuf's own wire primitives, into the same reused
// Batch, so it allocates no more than the hand-rolled layout; generated
// code would also allocate one message per entry):
//
//	message Batch {
//	  uint64 from = 1; uint64 to = 2;
//	  repeated Heartbeat heartbeats = 4;
//	  repeated HeartbeatResponse responses = 5;
//	}
//	message Heartbeat { uint64 group = 1; uint64 term = 2; sint64 sent = 3; }
//	message HeartbeatResponse { uint64 group = 1; uint64 term = 2; bool granted = 3; sint64 sent = 4; }
//
// Only the coalesced lists are written: they are what scales with groups.

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func protoAppend(dst []byte, b *multiraft.Batch) []byte {
	start := len(dst)
	dst = append(dst, multiraft.WireVersion, 0, 0, 0, 0, 0, 0, 0, 0)
	dst = protowire.AppendTag(dst, 1, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(b.From))
	dst = protowire.AppendTag(dst, 2, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(b.To))
	for _, e := range b.Heartbeats {
		sent := protowire.EncodeZigZag(int64(e.Sent))
		n := 3 + protowire.SizeVarint(uint64(e.Group)) + protowire.SizeVarint(e.Term) + protowire.SizeVarint(sent)
		dst = protowire.AppendTag(dst, 4, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(n))
		dst = protowire.AppendTag(dst, 1, protowire.VarintType)
		dst = protowire.AppendVarint(dst, uint64(e.Group))
		dst = protowire.AppendTag(dst, 2, protowire.VarintType)
		dst = protowire.AppendVarint(dst, e.Term)
		dst = protowire.AppendTag(dst, 3, protowire.VarintType)
		dst = protowire.AppendVarint(dst, sent)
	}
	for _, e := range b.Responses {
		sent := protowire.EncodeZigZag(int64(e.Sent))
		n := 5 + protowire.SizeVarint(uint64(e.Group)) + protowire.SizeVarint(e.Term) + protowire.SizeVarint(sent)
		dst = protowire.AppendTag(dst, 5, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(n))
		dst = protowire.AppendTag(dst, 1, protowire.VarintType)
		dst = protowire.AppendVarint(dst, uint64(e.Group))
		dst = protowire.AppendTag(dst, 2, protowire.VarintType)
		dst = protowire.AppendVarint(dst, e.Term)
		dst = protowire.AppendTag(dst, 3, protowire.VarintType)
		dst = protowire.AppendVarint(dst, protowire.EncodeBool(e.Granted))
		dst = protowire.AppendTag(dst, 4, protowire.VarintType)
		dst = protowire.AppendVarint(dst, sent)
	}
	body := dst[start+multiraft.FrameHeaderSize:]
	binary.LittleEndian.PutUint32(dst[start+1:], uint32(len(body)))
	binary.LittleEndian.PutUint32(dst[start+5:], crc32.Checksum(body, crcTable))
	return dst
}

var errProto = errors.New("proto: malformed")

// protoFields calls f for each varint field of msg.
func protoFields(msg []byte, f func(num protowire.Number, v uint64)) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 || typ != protowire.VarintType {
			return errProto
		}
		msg = msg[n:]
		v, n := protowire.ConsumeVarint(msg)
		if n < 0 {
			return errProto
		}
		msg = msg[n:]
		f(num, v)
	}
	return nil
}

func protoDecode(frame []byte, b *multiraft.Batch) error {
	body := frame[multiraft.FrameHeaderSize:]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(frame[5:]) {
		return errProto
	}
	b.Heartbeats, b.Responses = b.Heartbeats[:0], b.Responses[:0]
	for len(body) > 0 {
		num, typ, n := protowire.ConsumeTag(body)
		if n < 0 {
			return errProto
		}
		body = body[n:]
		switch typ {
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(body)
			if n < 0 {
				return errProto
			}
			body = body[n:]
			switch num {
			case 1:
				b.From = election.ID(v)
			case 2:
				b.To = election.ID(v)
			}
		case protowire.BytesType:
			msg, n := protowire.ConsumeBytes(body)
			if n < 0 {
				return errProto
			}
			body = body[n:]
			var err error
			switch num {
			case 4:
				var e multiraft.Heartbeat
				err = protoFields(msg, func(num protowire.Number, v uint64) {
					switch num {
					case 1:
						e.Group = multiraft.GroupID(v)
					case 2:
						e.Term = v
					case 3:
						e.Sent = time.Duration(protowire.DecodeZigZag(v))
					}
				})
				b.Heartbeats = append(b.Heartbeats, e)
			case 5:
				var e multiraft.HeartbeatResponse
				err = protoFields(msg, func(num protowire.Number, v uint64) {
					switch num {
					case 1:
						e.Group = multiraft.GroupID(v)
					case 2:
						e.Term = v
					case 3:
						e.Granted = protowire.DecodeBool(v)
					case 4:
						e.Sent = time.Duration(protowire.DecodeZigZag(v))
					}
				})
				b.Responses = append(b.Responses, e)
			}
			if err != nil {
				return err
			}
		default:
			return errProto
		}
	}
	return nil
}

func TestProtoRivalRoundTrip(t *testing.T) {
	b := heartbeatBatch(100)
	var got multiraft.Batch
	if err := protoDecode(protoAppend(nil, &b), &got); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(normalize(b)) != fmt.Sprint(normalize(got)) {
		t.Fatal("proto rival does not round-trip")
	}
}

// BenchmarkWire encodes and decodes a batch of n heartbeats and n answers
// (2n entries) with the wire format (codec=wire) and with its protobuf
// rival (codec=proto); ns/entry and B/entry are per entry, frame bytes
// included.
func BenchmarkWire(b *testing.B) {
	type codec struct {
		name   string
		encode func([]byte, *multiraft.Batch) []byte
		decode func([]byte, *multiraft.Batch) error
	}
	codecs := []codec{
		{"wire", multiraft.AppendBatch, multiraft.DecodeBatch},
		{"proto", protoAppend, protoDecode},
	}
	for _, n := range []int{100, 20000} {
		batch := heartbeatBatch(n)
		entries := float64(2 * n)
		for _, c := range codecs {
			frame := c.encode(nil, &batch)
			b.Run(fmt.Sprintf("op=encode/n=%d/codec=%s", n, c.name), func(b *testing.B) {
				b.ReportAllocs()
				buf := make([]byte, 0, len(frame))
				for b.Loop() {
					buf = c.encode(buf[:0], &batch)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/entries, "ns/entry")
				b.ReportMetric(float64(len(frame))/entries, "B/entry")
			})
			b.Run(fmt.Sprintf("op=decode/n=%d/codec=%s", n, c.name), func(b *testing.B) {
				b.ReportAllocs()
				var got multiraft.Batch
				for b.Loop() {
					if err := c.decode(frame, &got); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/entries, "ns/entry")
				b.ReportMetric(float64(len(frame))/entries, "B/entry")
			})
		}
	}
}
