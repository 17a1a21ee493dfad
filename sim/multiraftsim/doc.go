// Package multiraftsim is the multi-raft crash experiment of "raftsim
// multiraft":
// G groups over N hosts (multiraft.Host) on one virtual wheel, leaders
// balanced, a fraction of the groups active, then one host crashes. It
// measures how long every group the crashed host led takes to have a
// leader again, whether any other group changed leader, and the message
// and timer rates before and after coalescing.
package multiraftsim
