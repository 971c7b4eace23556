// Package jsontail tells whether a document that must hold one JSON value
// holds anything after it.
package jsontail

import (
	"bytes"
	"encoding/json"
)

// Trailing reports whether data holds anything but white space after the
// value dec has just decoded from it (dec reads data from its start).
// json.Decoder.More is no such test: it reports false before a stray ']'
// or '}', so that `{...}}` would pass for one object.
func Trailing(dec *json.Decoder, data []byte) bool {
	return len(bytes.TrimSpace(data[dec.InputOffset():])) > 0
}
