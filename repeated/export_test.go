package repeated

// ChildEnv names the environment variable that tells a test binary it
// runs as a test's child process.
const ChildEnv = "RAFTICK_REPEATED_TEST_CHILD"
