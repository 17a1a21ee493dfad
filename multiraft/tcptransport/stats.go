package tcptransport

import "sync/atomic"

// Stats counts what a Transport did. Queued = Written + Dropped (of
// queued batches) + what still waits, give or take the batches in
// flight.
type Stats struct {
	// Queued counts batches Send queued; Dropped those dropped instead
	// (queue full or closed) or later (queued for a peer that could not
	// be reached, or lost with a failed write); Unroutable those to a
	// node not in Config.Peers.
	Queued, Dropped, Unroutable int64
	// Written counts batches written to connections (handed to the
	// kernel; a peer that dies may still lose them), BytesWritten their
	// frames' bytes.
	Written, BytesWritten int64
	// Received counts batches read and handed to the Handler,
	// BytesReceived their frames' bytes.
	Received, BytesReceived int64
	// Dials counts connections made to peers, DialFailures failed
	// attempts, Disconnects connections to peers that failed after they
	// were made.
	Dials, DialFailures, Disconnects int64
	// Corrupt counts accepted connections closed because their stream
	// broke the protocol (bad preface, a frame the wire format refuses,
	// a batch from the wrong node).
	Corrupt int64
}

type counters struct {
	queued, dropped, unroutable      atomic.Int64
	written, bytesWritten            atomic.Int64
	received, bytesReceived          atomic.Int64
	dials, dialFailures, disconnects atomic.Int64
	corrupt                          atomic.Int64
}

// Stats returns the transport's counters.
func (t *Transport) Stats() Stats {
	c := &t.stats
	return Stats{
		Queued: c.queued.Load(), Dropped: c.dropped.Load(), Unroutable: c.unroutable.Load(),
		Written: c.written.Load(), BytesWritten: c.bytesWritten.Load(),
		Received: c.received.Load(), BytesReceived: c.bytesReceived.Load(),
		Dials: c.dials.Load(), DialFailures: c.dialFailures.Load(), Disconnects: c.disconnects.Load(),
		Corrupt: c.corrupt.Load(),
	}
}
