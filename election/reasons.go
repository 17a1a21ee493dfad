package election

// Reasons a Node puts in Event.Reason. They are stable words that traces
// and scenario files print, and that other engines reporting
// election.Events (such as etcdadapter) use where they mean the same;
// code that reacts to an event should still match on its EventType. A
// reason may carry detail after the word ("already voted for 2",
// "term bound reached: vote"), so compare with strings.HasPrefix.
const (
	ReasonStart          = "start"                   // the node started
	ReasonResume         = "resume"                  // the node left hibernation
	ReasonTimeout        = "election timeout"        // a follower heard no leader
	ReasonVoteTimeout    = "vote timeout"            // a candidate's round ran out
	ReasonCampaign       = "campaign"                // Campaign was called
	ReasonTransfer       = "transfer"                // leadership was handed over
	ReasonSelf           = "self"                    // a candidate's vote for itself
	ReasonWon            = "won election"            // a candidate became leader
	ReasonPreVoteWon     = "pre-vote won"            // a pre-candidate won its pre-vote
	ReasonHigherTerm     = "higher term"             // a message carried a higher term
	ReasonLeaderHB       = "leader heartbeat"        // a leader's heartbeat arrived
	ReasonCheckQuorum    = "check quorum"            // a leader lost touch with a majority
	ReasonVoteTimedOut   = "vote timed out"          // a candidate gave up its round
	ReasonLostElection   = "lost election"           // a candidate gave up
	ReasonLostPreVote    = "lost pre-vote"           // a pre-candidate gave up
	ReasonStorage        = "storage error"           // persisting term or vote failed
	ReasonStale          = "stale term"              // a message carried a lower term
	ReasonLease          = "leader lease"            // refused within a leader's lease
	ReasonLeaderAlive    = "leader alive"            // refused while a leader is heard
	ReasonLogBehind      = "log not up to date"      // the candidate's log is behind
	ReasonAlreadyVoted   = "already voted"           // the vote went elsewhere this term
	ReasonDeposed        = "deposed by the request"  // GrantOnlyAsFollower: not a follower when it came
	ReasonLeaderKnown    = "leader known"            // refused: a leader is known
	ReasonUnknownSender  = "unknown sender"          // the sender is not a member
	ReasonWrongTo        = "wrong recipient"         // the message is for another node
	ReasonUnexpected     = "unexpected"              // the message makes no sense here
	ReasonAnomalyLeaders = "two leaders in one term" // a second leader in this term spoke
	ReasonTermExhausted  = "term bound reached"      // Config.MaxTerm stops the node
)
