// Package tcptransport carries a multiraft.Host's batches between
// processes over TCP, in the wire format of multiraft.AppendBatch
// (docs/design.md, "The wire format of a Batch").
//
//	cfg := tcptransport.DefaultConfig()
//	cfg.ID, cfg.Listen = 1, "10.0.0.1:7100"
//	cfg.Peers = map[election.ID]string{2: "10.0.0.2:7100", 3: "10.0.0.3:7100"}
//	tr, err := tcptransport.New(cfg)
//	h, err := multiraft.NewHost(hostCfg, wheel.Shared(), tr)
//	err = tr.Start(h.Step)
//	defer tr.Close() // after h.Stop()
//
// Each host dials one connection to each peer host and writes its
// batches to it; the peer's listener reads them and hands each to the
// Handler (Host.Step), one goroutine per connection. So each pair of
// hosts has one connection each way.
//
// Send never blocks the Host: it queues the batch for the peer's writer
// goroutine (a bounded queue, Config.QueueLen) and drops it, counting it
// in Stats.Dropped, when the queue is full. The writer encodes batches
// into a buffered writer and flushes when its queue is empty, so the
// batches a Host sends at once leave in one write. A connection that
// fails is redialled with exponential backoff (Config.BackoffMin to
// BackoffMax, jittered); batches queued while the peer cannot be reached
// are dropped, since Raft tolerates loss and old heartbeats are of no
// use. A connection whose stream breaks the protocol (a corrupt frame, a
// batch from another node than the one that connected) is closed and
// logged; its peer redials. Config.TLS secures connections with
// crypto/tls.
package tcptransport
