// Package golden runs datadriven scenario files for the tests of
// election and multiraft: each file gets a fresh state, every command's
// output is compared with the file, and a safety check runs after each
// command. It imports nothing of the module.
package golden
