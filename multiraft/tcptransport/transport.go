package tcptransport

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
)

// preface opens every connection: a magic string naming the protocol and
// its version, then the dialling host's node ID (8 bytes, little
// endian). The acceptor refuses a connection with another magic, and
// every batch on it whose From is not that ID.
const preface = "raftick\x01"

const prefaceSize = len(preface) + 8

// Handler receives each batch read from a peer, on that connection's
// goroutine (one per peer host, so batches of different peers are handled
// in parallel and each peer's in order). The batch's slices are reused for
// the next batch of the connection: the handler must not keep them after
// it returns. multiraft.Host.Step is one.
type Handler func(multiraft.Batch)

// Transport carries a multiraft.Host's batches to its peer hosts over
// TCP, one connection per peer host and direction: Send queues a batch
// for its peer's writer goroutine, which encodes it in the wire format
// (multiraft.AppendBatch) into a buffered writer and flushes when its
// queue is empty, so batches sent together leave in one write. A writer
// dials its peer when it starts and after its connection fails, backing
// off between failed attempts. A listener accepts the peers' connections
// and hands every batch read to the Handler.
type Transport struct {
	cfg     Config
	log     hclog.Logger
	peers   map[election.ID]*peer // fixed after New: read without a lock
	ln      net.Listener
	ctx     context.Context // cancelled by Close
	cancel  context.CancelFunc
	stats   counters
	mu      sync.Mutex
	closed  bool
	started bool
	conns   map[net.Conn]struct{} // accepted, open
	wg      sync.WaitGroup
}

// peer is the sending side of one peer host.
type peer struct {
	t        *Transport
	id       election.ID
	addr     string
	queue    chan multiraft.Batch
	dropping atomic.Bool // the last Send to this peer dropped its batch
	rand     *rand.Rand  // backoff jitter; the writer's goroutine only
	mu       sync.Mutex
	conn     net.Conn // the open connection, for Close
}

// New validates cfg, listens on cfg.Listen (if set) and starts a writer
// per peer; batches sent before Start are delivered to peers that are up.
// Call Start to begin accepting peers' connections.
func New(cfg Config) (*Transport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Peers = maps.Clone(cfg.Peers)
	t := &Transport{cfg: cfg, log: cfg.Logger, peers: make(map[election.ID]*peer), conns: make(map[net.Conn]struct{})}
	if t.log == nil {
		t.log = defaultLogger()
	}
	if ln := cfg.Listener; ln != nil || cfg.Listen != "" {
		if ln == nil {
			var err error
			if ln, err = net.Listen("tcp", cfg.Listen); err != nil {
				return nil, fmt.Errorf("tcptransport: listen on %s: %w", cfg.Listen, err)
			}
		}
		if cfg.TLS != nil {
			ln = tls.NewListener(ln, cfg.TLS)
		}
		t.ln = ln
	}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	for id, addr := range cfg.Peers {
		p := &peer{t: t, id: id, addr: addr, queue: make(chan multiraft.Batch, cfg.QueueLen),
			rand: rand.New(rand.NewPCG(uint64(cfg.ID), uint64(id)))}
		t.peers[id] = p
		t.wg.Add(1)
		go p.run()
	}
	return t, nil
}

// Addr returns the listener's address (with the port chosen for ":0"),
// or nil without a listener.
func (t *Transport) Addr() net.Addr {
	if t.ln == nil {
		return nil
	}
	return t.ln.Addr()
}

// Start begins accepting peers' connections and handing their batches to
// h. It returns ErrClosed after Close and an error if called twice or
// with a nil h.
func (t *Transport) Start(h Handler) error {
	if h == nil {
		return errors.New("tcptransport: Start: nil Handler")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.closed:
		return ErrClosed
	case t.started:
		return errors.New("tcptransport: Start called twice")
	}
	t.started = true
	if t.ln != nil {
		t.wg.Add(1)
		go t.accept(h)
	}
	return nil
}

// Send queues b for its peer's connection and returns at once. It never
// blocks: when the peer's queue is full (the peer is slow, unreachable or
// reconnecting) b is dropped and counted in Stats.Dropped, as Raft
// tolerates; a batch to a node not in Config.Peers is counted in
// Stats.Unroutable, and one sent after Close in Stats.Dropped. The
// Transport owns b's slices from then on.
func (t *Transport) Send(b multiraft.Batch) {
	p := t.peers[b.To]
	if p == nil {
		t.stats.unroutable.Add(1)
		return
	}
	if t.ctx.Err() != nil {
		t.stats.dropped.Add(1)
		return
	}
	select {
	case p.queue <- b:
		t.stats.queued.Add(1)
		if p.dropping.Load() {
			p.dropping.Store(false)
		}
	default:
		t.stats.dropped.Add(1)
		if p.dropping.CompareAndSwap(false, true) {
			t.log.Warn("send queue full: dropping batches", "peer", p.id, "addr", p.addr, "queue", cap(p.queue))
		}
	}
}

// Close stops the listener, closes every connection and waits for the
// Transport's goroutines, a Handler call in progress included; batches
// still queued are dropped. It is idempotent and returns nil.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.cancel()
	if t.ln != nil {
		_ = t.ln.Close()
	}
	for c := range t.conns {
		_ = c.Close()
	}
	t.mu.Unlock()
	for _, p := range t.peers {
		p.mu.Lock()
		if p.conn != nil {
			_ = p.conn.Close()
		}
		p.mu.Unlock()
	}
	t.wg.Wait()
	return nil
}

// run is the peer's writer goroutine: connect, write until the
// connection fails, back off, again, until Close.
func (p *peer) run() {
	t := p.t
	defer t.wg.Done()
	backoff := t.cfg.BackoffMin
	failing := false
	for t.ctx.Err() == nil {
		conn, err := p.dial()
		if err != nil {
			if t.ctx.Err() != nil {
				return
			}
			t.stats.dialFailures.Add(1)
			if !failing {
				t.log.Warn("cannot connect to peer; retrying with backoff", "peer", p.id, "addr", p.addr, "error", err)
				failing = true
			}
			// What waited for this peer is stale by the time it is up:
			// drop it rather than flood the peer with old heartbeats.
			p.drain()
			wait := backoff/2 + time.Duration(p.rand.Int64N(int64(backoff/2)+1))
			backoff = min(2*backoff, t.cfg.BackoffMax)
			select {
			case <-time.After(wait):
			case <-t.ctx.Done():
				return
			}
			continue
		}
		if failing {
			t.log.Info("connected to peer", "peer", p.id, "addr", p.addr)
			failing = false
		}
		t.stats.dials.Add(1)
		backoff = t.cfg.BackoffMin
		err = p.write(conn)
		p.mu.Lock()
		p.conn = nil
		p.mu.Unlock()
		_ = conn.Close()
		if t.ctx.Err() != nil {
			return
		}
		t.stats.disconnects.Add(1)
		t.log.Warn("connection to peer lost; reconnecting", "peer", p.id, "addr", p.addr, "error", err)
	}
}

// dial connects to the peer (with TLS if configured) and registers the
// connection for Close.
func (p *peer) dial() (net.Conn, error) {
	t := p.t
	ctx, cancel := context.WithTimeout(t.ctx, t.cfg.DialTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	if t.cfg.TLS != nil {
		cfg := t.cfg.TLS.Clone()
		if cfg.ServerName == "" {
			if host, _, err := net.SplitHostPort(p.addr); err == nil {
				cfg.ServerName = host
			}
		}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		conn = tc
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.ctx.Err() != nil {
		_ = conn.Close()
		return nil, t.ctx.Err()
	}
	p.conn = conn
	return conn, nil
}

// drain drops every queued batch, counting them.
func (p *peer) drain() {
	for {
		select {
		case <-p.queue:
			p.t.stats.dropped.Add(1)
		default:
			return
		}
	}
}

// write writes the preface, then every queued batch, flushing whenever
// the queue is empty, until a write fails or Close.
func (p *peer) write(conn net.Conn) error {
	t := p.t
	w := bufio.NewWriterSize(deadlineWriter{conn, t.cfg.WriteTimeout}, t.cfg.BufferSize)
	var pre [prefaceSize]byte
	copy(pre[:], preface)
	binary.LittleEndian.PutUint64(pre[len(preface):], uint64(t.cfg.ID))
	if _, err := w.Write(pre[:]); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for {
		select {
		case b := <-p.queue:
			// Encode in place in the writer's buffer when the frame fits
			// (AppendBatch grows a copy otherwise).
			frame := multiraft.AppendBatch(w.AvailableBuffer(), &b)
			b.Release() // encoded: its entries go back to the Hosts
			if _, err := w.Write(frame); err != nil {
				t.stats.dropped.Add(1)
				return err
			}
			t.stats.written.Add(1)
			t.stats.bytesWritten.Add(int64(len(frame)))
			if len(p.queue) == 0 {
				if err := w.Flush(); err != nil {
					return err
				}
			}
		case <-t.ctx.Done():
			return nil
		}
	}
}

// deadlineWriter bounds each write to a connection.
type deadlineWriter struct {
	conn    net.Conn
	timeout time.Duration
}

func (w deadlineWriter) Write(b []byte) (int, error) {
	if err := w.conn.SetWriteDeadline(time.Now().Add(w.timeout)); err != nil {
		return 0, err
	}
	return w.conn.Write(b)
}

// accept accepts peers' connections until Close.
func (t *Transport) accept(h Handler) {
	defer t.wg.Done()
	var wait time.Duration
	for {
		conn, err := t.ln.Accept()
		if err != nil {
			if t.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors, a connection reset before it was
			// accepted: wait and accept again, as net/http does.
			wait = min(max(2*wait, 5*time.Millisecond), time.Second)
			t.log.Error("accept failed; retrying", "addr", t.ln.Addr(), "error", err, "wait", wait)
			select {
			case <-time.After(wait):
			case <-t.ctx.Done():
				return
			}
			continue
		}
		wait = 0
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			_ = conn.Close()
			return
		}
		t.conns[conn] = struct{}{}
		t.wg.Add(1)
		t.mu.Unlock()
		go t.serve(conn, h)
	}
}

// errStream marks a connection closed for what its peer sent.
var errStream = errors.New("tcptransport: bad stream")

// serve reads one accepted connection's batches into h until it fails or
// Close. A stream that breaks the protocol (wrong preface, a frame the
// wire format refuses, a batch from another node than the preface's) is
// logged and counted, and the connection closed: the peer redials.
func (t *Transport) serve(conn net.Conn, h Handler) {
	defer t.wg.Done()
	defer func() {
		t.mu.Lock()
		delete(t.conns, conn)
		t.mu.Unlock()
		_ = conn.Close()
	}()
	err := t.read(conn, h)
	switch {
	case t.ctx.Err() != nil:
	case errors.Is(err, errStream):
		t.stats.corrupt.Add(1)
		t.log.Error("closing connection: corrupt stream", "remote", conn.RemoteAddr(), "error", err)
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
	default:
		t.log.Warn("connection from peer failed", "remote", conn.RemoteAddr(), "error", err)
	}
}

func (t *Transport) read(conn net.Conn, h Handler) error {
	r := bufio.NewReaderSize(conn, t.cfg.BufferSize)
	buf := make([]byte, max(prefaceSize, multiraft.FrameHeaderSize, 4<<10))
	if _, err := io.ReadFull(r, buf[:prefaceSize]); err != nil {
		return err
	}
	if string(buf[:len(preface)]) != preface {
		return fmt.Errorf("%w: preface %q, want %q", errStream, buf[:len(preface)], preface)
	}
	from := election.ID(binary.LittleEndian.Uint64(buf[len(preface):]))
	var b multiraft.Batch
	for {
		if _, err := io.ReadFull(r, buf[:multiraft.FrameHeaderSize]); err != nil {
			return err
		}
		n, err := multiraft.FrameBodyLen(buf, t.cfg.MaxFrame)
		if err != nil {
			return fmt.Errorf("%w: %w", errStream, err)
		}
		size := multiraft.FrameHeaderSize + n
		if size > len(buf) {
			grown := make([]byte, max(size, 2*len(buf)))
			copy(grown, buf[:multiraft.FrameHeaderSize])
			buf = grown
		}
		if _, err := io.ReadFull(r, buf[multiraft.FrameHeaderSize:size]); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		if err := multiraft.DecodeBatch(buf[:size], &b); err != nil {
			return fmt.Errorf("%w: %w", errStream, err)
		}
		if b.From != from {
			return fmt.Errorf("%w: batch from node %d on node %d's connection", errStream, b.From, from)
		}
		t.stats.received.Add(1)
		t.stats.bytesReceived.Add(int64(size))
		h(b)
	}
}
