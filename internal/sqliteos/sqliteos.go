// Package sqliteos carries platform/sqlite's OS to plock, which must not
// import it. A nil *platform.Platform means plock's SQLite mode, in every
// program: a path must never be locked in two modes by two programs. Yet
// a program that takes only lock files (passing platform.OS()) must not
// link modernc.org/sqlite for it. So platform/sqlite registers its OS here
// as it initialises: a program that links it, by any import (directly,
// through lease/sqlite, or a blank import), has it; in any other, OS is
// nil and plock says how to choose a mode.
package sqliteos

import "github.com/rivus/collab/platform"

// OS returns the operating system's platform with modernc.org/sqlite
// (platform/sqlite's OS), or is nil in a program that does not link
// platform/sqlite. Only platform/sqlite's init sets it (and tests, which
// restore it); it is read only after init, so it needs no lock.
var OS func() *platform.Platform
