// Package quote quotes lease keys for the messages of errors.
package quote

import (
	"fmt"
	"strconv"
)

// maxQuoted bounds how much of a key a message repeats.
const maxQuoted = 80

// Key quotes key for a message, shortening a long or invalid one.
func Key(key string) string {
	if len(key) <= maxQuoted {
		return strconv.Quote(key)
	}
	return strconv.Quote(key[:maxQuoted]) + fmt.Sprintf("... (%d bytes)", len(key))
}
