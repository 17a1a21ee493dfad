package election

// MetricsOn reports whether the node reports metrics, for the test that
// checks a BlackholeSink turns them off entirely.
func (n *Node) MetricsOn() bool { return n.metrics != nil }
