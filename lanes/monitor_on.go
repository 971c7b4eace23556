//go:build collabmonitor

package lanes

// monitoring turns the contract monitor on (see monitor.go).
const monitoring = true
