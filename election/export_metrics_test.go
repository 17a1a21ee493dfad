package election

// MetricsOn reports whether the node reports metrics, for the test that
// checks a BlackholeSink turns them off entirely.
func (n *Node) MetricsOn() bool { return n.metrics != nil }

// SharesState reports whether a and b share their metrics state and
// logger (Config.Shared).
func SharesState(a, b *Node) bool { return a.metrics == b.metrics && a.logger == b.logger }
