package tcptransport_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/multiraft/tcptransport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitFor is how long a test waits for something to happen on loopback
// before it fails; the tests wait for events, never for a time.
const waitFor = 20 * time.Second

// sink collects the batches a transport received.
type sink struct {
	mu  sync.Mutex
	got []multiraft.Batch
}

func (s *sink) handle(b multiraft.Batch) {
	// The transport reuses b's slices: copy them.
	c := multiraft.Batch{From: b.From, To: b.To}
	c.Heartbeats = append(c.Heartbeats, b.Heartbeats...)
	c.Msgs = append(c.Msgs, b.Msgs...)
	c.Responses = append(c.Responses, b.Responses...)
	c.Controls = append(c.Controls, b.Controls...)
	s.mu.Lock()
	s.got = append(s.got, c)
	s.mu.Unlock()
}

func (s *sink) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return ln
}

func config(id election.ID, ln net.Listener, peers map[election.ID]string) tcptransport.Config {
	cfg := tcptransport.DefaultConfig()
	cfg.ID = id
	cfg.Listener = ln
	cfg.Peers = peers
	cfg.BackoffMin, cfg.BackoffMax = 5*time.Millisecond, 50*time.Millisecond
	cfg.Logger = hclog.NewNullLogger()
	return cfg
}

func hb(from, to election.ID, group multiraft.GroupID) multiraft.Batch {
	return multiraft.Batch{From: from, To: to, Heartbeats: []multiraft.Heartbeat{{Group: group, Term: 3, Sent: time.Duration(group)}}}
}

func TestConfigValidate(t *testing.T) {
	require.ErrorIs(t, tcptransport.DefaultConfig().Validate(), tcptransport.ErrInvalidConfig)
	bad := map[string]func(*tcptransport.Config){
		"ID":          func(c *tcptransport.Config) { c.ID = 0 },
		"QueueLen":    func(c *tcptransport.Config) { c.QueueLen = 0 },
		"MaxFrame":    func(c *tcptransport.Config) { c.MaxFrame = 10 },
		"DialTimeout": func(c *tcptransport.Config) { c.DialTimeout = 0 },
		"BackoffMax":  func(c *tcptransport.Config) { c.BackoffMax = c.BackoffMin / 2 },
		"BufferSize":  func(c *tcptransport.Config) { c.BufferSize = 1 },
		"Peers":       func(c *tcptransport.Config) { c.Peers = map[election.ID]string{1: "x:1"} },
	}
	for field, f := range bad {
		cfg := tcptransport.DefaultConfig()
		cfg.ID = 1
		require.NoError(t, cfg.Validate())
		f(&cfg)
		var fe *tcptransport.FieldError
		require.ErrorAs(t, cfg.Validate(), &fe, field)
		require.Equal(t, field, fe.Field)
	}
}

// TestDelivery: batches sent one way arrive whole and in order.
func TestDelivery(t *testing.T) {
	lnB := listen(t)
	var got sink
	b, err := tcptransport.New(config(2, lnB, nil))
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, b.Start(got.handle))
	a, err := tcptransport.New(config(1, nil, map[election.ID]string{2: lnB.Addr().String()}))
	require.NoError(t, err)
	defer a.Close()
	const n = 500
	for g := range n {
		a.Send(hb(1, 2, multiraft.GroupID(g)))
	}
	a.Send(multiraft.Batch{From: 1, To: 9}) // no such peer
	// Frames of growing and shrinking sizes: the reader's buffer grows
	// in steps that leave room past its length.
	var sizes []int
	for k := 1000; k < 3000; k += 7 {
		sizes = append(sizes, k)
	}
	sizes = append(sizes, 30000, 100)
	for _, k := range sizes {
		b := multiraft.Batch{From: 1, To: 2, Heartbeats: make([]multiraft.Heartbeat, k)}
		for i := range b.Heartbeats {
			b.Heartbeats[i] = multiraft.Heartbeat{Group: multiraft.GroupID(i), Term: uint64(k)}
		}
		a.Send(b)
	}
	total := n + len(sizes)
	require.Eventually(t, func() bool { return got.len() == total }, waitFor, time.Millisecond)
	for i, bt := range got.got[:n] {
		require.Equal(t, hb(1, 2, multiraft.GroupID(i)), bt)
	}
	for i, k := range sizes {
		bt := got.got[n+i]
		require.Len(t, bt.Heartbeats, k)
		require.Equal(t, uint64(k), bt.Heartbeats[k-1].Term)
	}
	s := a.Stats()
	require.Equal(t, int64(total), s.Queued)
	require.Equal(t, int64(1), s.Unroutable)
	require.Equal(t, int64(total), b.Stats().Received)
}

// TestReconnect: after the peer's process restarts on its address, the
// sender redials and delivery resumes.
func TestReconnect(t *testing.T) {
	lnB := listen(t)
	addr := lnB.Addr().String()
	var got1, got2 sink
	b, err := tcptransport.New(config(2, lnB, nil))
	require.NoError(t, err)
	require.NoError(t, b.Start(got1.handle))
	a, err := tcptransport.New(config(1, nil, map[election.ID]string{2: addr}))
	require.NoError(t, err)
	defer a.Close()
	a.Send(hb(1, 2, 1))
	require.Eventually(t, func() bool { return got1.len() == 1 }, waitFor, time.Millisecond)
	require.NoError(t, b.Close())

	// The peer is down: sends fail or wait, none blocks.
	for g := range 10 {
		a.Send(hb(1, 2, multiraft.GroupID(g)))
	}
	ln2, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	b2, err := tcptransport.New(config(2, ln2, nil))
	require.NoError(t, err)
	defer b2.Close()
	require.NoError(t, b2.Start(got2.handle))
	// Keep sending until one arrives: the first writes after the restart
	// may go to the dead connection.
	require.Eventually(t, func() bool {
		a.Send(hb(1, 2, 7))
		return got2.len() > 0
	}, waitFor, 5*time.Millisecond)
	s := a.Stats()
	require.GreaterOrEqual(t, s.Dials, int64(2))
	require.GreaterOrEqual(t, s.Disconnects+s.DialFailures, int64(1))
}

// TestQueueOverflow: a peer that stops reading fills the connection and
// then the queue; Send drops and counts instead of blocking.
func TestQueueOverflow(t *testing.T) {
	ln := listen(t)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c // never read
		}
	}()
	cfg := config(1, nil, map[election.ID]string{2: ln.Addr().String()})
	cfg.QueueLen = 8
	a, err := tcptransport.New(cfg)
	require.NoError(t, err)
	big := multiraft.Batch{From: 1, To: 2, Heartbeats: make([]multiraft.Heartbeat, 30000)}
	for i := range big.Heartbeats {
		big.Heartbeats[i] = multiraft.Heartbeat{Group: multiraft.GroupID(i * 1000003), Term: uint64(i) << 20, Sent: time.Duration(i) << 30}
	}
	// About 500 KB a batch: 400 of them are far more than loopback's
	// socket buffers hold.
	const n = 400
	for range n {
		a.Send(big)
	}
	s := a.Stats()
	require.Equal(t, int64(n), s.Queued+s.Dropped)
	require.Greater(t, s.Dropped, int64(0))
	conn := <-accepted
	require.NoError(t, a.Close()) // does not wait for the stuck write
	_ = conn.Close()
}

// TestCorruptStream: a stream that breaks the protocol closes the
// connection with a logged error, and the listener keeps serving.
func TestCorruptStream(t *testing.T) {
	var logs bytes.Buffer
	var logMu sync.Mutex
	lnB := listen(t)
	cfg := config(2, lnB, nil)
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Output: lockedWriter{&logMu, &logs}})
	var got sink
	b, err := tcptransport.New(cfg)
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, b.Start(got.handle))

	good := multiraft.AppendBatch(nil, &multiraft.Batch{From: 1, To: 2})
	preface := append([]byte("raftick\x01"), binary.LittleEndian.AppendUint64(nil, 1)...)
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)-1] ^= 1
	other := multiraft.AppendBatch(nil, &multiraft.Batch{From: 3, To: 2})
	cases := map[string][]byte{
		"bad preface":   append([]byte("GET / HTTP/1.1\r\n"), good...),
		"bad checksum":  append(append(append([]byte(nil), preface...), good...), flipped...),
		"wrong sender":  append(append([]byte(nil), preface...), other...),
		"huge frame":    append(append([]byte(nil), preface...), multiraft.WireVersion, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0),
		"wrong version": append(append([]byte(nil), preface...), 9, 0, 0, 0, 0, 0, 0, 0, 0),
	}
	n := int64(0)
	for name, stream := range cases {
		c, err := net.Dial("tcp", lnB.Addr().String())
		require.NoError(t, err)
		_, err = c.Write(stream)
		require.NoError(t, err)
		// The transport closes the connection: the read ends.
		require.NoError(t, c.SetReadDeadline(time.Now().Add(waitFor)))
		_, err = io.ReadAll(c)
		require.NoError(t, err, name)
		_ = c.Close()
		n++
		require.Eventually(t, func() bool { return b.Stats().Corrupt == n }, waitFor, time.Millisecond, name)
	}
	logMu.Lock()
	require.Contains(t, logs.String(), "corrupt stream")
	require.Contains(t, logs.String(), "checksum")
	logMu.Unlock()
	// The good frame before the corrupt one was delivered.
	require.Equal(t, 1, got.len())
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(b)
}

// selfSigned returns a TLS config that serves a certificate for
// 127.0.0.1 and trusts only it.
func selfSigned(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "raftick test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		RootCAs:      pool,
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS13,
	}
}

// TestTLS: batches travel over mutual TLS with a self-signed
// certificate; a plain-TCP sender gets nothing through.
func TestTLS(t *testing.T) {
	tc := selfSigned(t)
	lnB := listen(t)
	cfgB := config(2, lnB, nil)
	cfgB.TLS = tc
	var got sink
	b, err := tcptransport.New(cfgB)
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, b.Start(got.handle))

	plain, err := tcptransport.New(config(3, nil, map[election.ID]string{2: lnB.Addr().String()}))
	require.NoError(t, err)
	defer plain.Close()
	plain.Send(hb(3, 2, 99))

	cfgA := config(1, nil, map[election.ID]string{2: lnB.Addr().String()})
	cfgA.TLS = tc
	a, err := tcptransport.New(cfgA)
	require.NoError(t, err)
	defer a.Close()
	for g := range 50 {
		a.Send(hb(1, 2, multiraft.GroupID(g)))
	}
	require.Eventually(t, func() bool { return got.len() == 50 }, waitFor, time.Millisecond)
	for _, bt := range got.got {
		require.Equal(t, election.ID(1), bt.From)
	}
}

// TestCloseIdempotent: Close twice, Start after Close, Send after Close.
func TestCloseIdempotent(t *testing.T) {
	a, err := tcptransport.New(config(1, listen(t), map[election.ID]string{2: "127.0.0.1:1"}))
	require.NoError(t, err)
	require.NoError(t, a.Close())
	require.NoError(t, a.Close())
	require.ErrorIs(t, a.Start(func(multiraft.Batch) {}), tcptransport.ErrClosed)
	a.Send(hb(1, 2, 1))
	require.Equal(t, int64(1), a.Stats().Dropped)
}
