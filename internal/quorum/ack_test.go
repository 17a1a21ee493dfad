package quorum

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

func TestAck(t *testing.T) {
	a := NoAck
	require.False(t, a.Within(100*ms, time.Hour), "no answer yet")
	require.False(t, a.Leased(100*ms, time.Hour), "no lease yet")
	require.False(t, a.Silent(100*ms, 10*ms, ms), "nothing sent: not silent")

	a.Sent(10 * ms)
	a.Sent(20 * ms)
	require.Equal(t, 10*ms, a.Since, "the first unanswered heartbeat")
	require.True(t, a.Silent(15*ms, 10*ms, 5*ms))
	require.False(t, a.Silent(14*ms, 10*ms, 5*ms), "not yet patient enough")

	a.Answered(30*ms, 20*ms)
	require.Equal(t, None, a.Since, "an answer ends the wait")
	require.True(t, a.Within(40*ms, 10*ms))
	require.False(t, a.Within(41*ms, 10*ms))
	require.True(t, a.Leased(39*ms, 20*ms))
	require.False(t, a.Leased(40*ms, 20*ms), "the lease ends strictly before send time + lease")

	a.Answered(35*ms, 15*ms)
	require.Equal(t, 20*ms, a.Lease, "a late answer to an older heartbeat keeps the later lease")
	a.Answered(36*ms, 0)
	require.Equal(t, 20*ms, a.Lease, "an answer of unknown send time gives no lease")
	a.Answered(37*ms, 50*ms)
	require.Equal(t, 20*ms, a.Lease, "a send time after the answer is refused")
}

func TestLeasedQuorum(t *testing.T) {
	acks := []Ack{NoAck, NoAck, NoAck, NoAck} // five voters: the leader and four
	m := Majority(5)
	require.False(t, m.Leased(acks, 100*ms, 50*ms))
	acks[0].Answered(90*ms, 80*ms)
	require.False(t, m.Leased(acks, 100*ms, 50*ms), "two of five")
	acks[3].Answered(95*ms, 60*ms)
	require.True(t, m.Leased(acks, 100*ms, 50*ms), "three of five")
	require.False(t, m.Leased(acks, 110*ms, 50*ms), "the older lease ran out")

	acks[1].Sent(10 * ms)
	acks[2].Sent(10 * ms)
	require.Equal(t, 2, Silent(acks, 100*ms, 50*ms, 20*ms))
	require.Equal(t, 0, Silent(acks, 25*ms, 50*ms, 20*ms), "not patient enough yet")
}
