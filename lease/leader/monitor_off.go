//go:build !collabmonitor

package leader

// monitoring turns the contract monitor off: the build has no
// collabmonitor tag (see monitor.go).
const monitoring = false
