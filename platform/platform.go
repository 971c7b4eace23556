package platform

import "sync"

// Platform is what the runtime packages reach the operating system through.
//
// FS and Process are required. A nil Clock means the real clock. A nil
// SQLite means the platform has no SQLite, and callers use their file
// fallbacks; platform/sqlite has one.
type Platform struct {
	FS      FS
	Process Process
	Clock   Clock  // nil means the real clock
	SQLite  SQLite // nil means no SQLite: callers fall back to files
}

// GetClock returns p.Clock, or the real clock when it is nil.
func (p *Platform) GetClock() Clock {
	if p.Clock == nil {
		return RealClock()
	}
	return p.Clock
}

var osPlatform = sync.OnceValue(func() *Platform {
	return &Platform{
		FS:      OSFS(),
		Process: OSProcess(),
		Clock:   RealClock(),
	}
})

// OS returns the platform of the running operating system: its files,
// processes and clock, and no SQLite, so that a program that needs none
// links none; platform/sqlite's OS adds modernc.org/sqlite's. Every call
// returns the same value, so that callers who compare platforms (plock
// shares in-process turns between callers of one platform) see one.
func OS() *Platform { return osPlatform() }
