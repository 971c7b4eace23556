package postgres

import (
	"strconv"
	"strings"

	"github.com/rivus/collab/lease/store"
)

// queries are the statements of a repository, on its qualified table.
type queries struct {
	load, loadForUpdate, insert, update, overwrite, keys string
}

// newQueries returns the statements on table, of the given schema
// version: schemaVersion, or versionWithoutValue for a read-only
// repository, whose loads then read every value as "".
func newQueries(table string, version int64) queries {
	const set = "SET revision = revision + 1, generation = $3, holder = $4, released = $5, renewed_at = $6, ttl_ns = $7, broken = $8, value = $9"
	columns := loadColumns(version)
	return queries{
		load:          "SELECT " + columns + " FROM " + table + " WHERE key = $1",
		loadForUpdate: "SELECT " + columns + " FROM " + table + " WHERE key = $1 FOR UPDATE",
		// A new record: the row's primary key decides between two
		// creators, and the loser writes nothing.
		insert: "INSERT INTO " + table + " (key, revision, generation, holder, released, renewed_at, ttl_ns, broken, value)" +
			" VALUES ($1, 1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (key) DO NOTHING RETURNING revision",
		// Over a revision, and over a row that storedRowIsValid accepts
		// ($10 is the holder written, if it parses, else NULL):
		// a concurrent writer holds the row lock until it commits, and
		// this statement then re-checks the revision on the row it wrote,
		// so it finds none to update. A row it does not recognise is
		// left as it is, for Save to look at (see settle).
		update: "UPDATE " + table + " " + set + " WHERE key = $1 AND revision = $2 AND " + storedRowIsValid + " RETURNING revision",
		// Over a revision, on a row already locked and checked in Go: the
		// update's first overwriteParams parameters.
		overwrite: "UPDATE " + table + " " + set + " WHERE key = $1 AND revision = $2 RETURNING revision",
		// Byte order, as Go sorts strings.
		keys: "SELECT key FROM " + table + ` ORDER BY key COLLATE "C"`,
	}
}

// overwriteParams is the number of parameters of the overwrite statement:
// the key, the expected revision and the columns written.
const overwriteParams = 9

// loadColumns lists the columns that loads read, in storedRow's order,
// from tables of the given schema version: a table of
// versionWithoutValue has no value column, and reads as having none.
func loadColumns(version int64) string {
	const columns = "revision, generation, holder, released, renewed_at, ttl_ns, broken, "
	if version == versionWithoutValue {
		return columns + "''::text AS value"
	}
	return columns + "value"
}

// storedRowIsValid is the condition on the stored row under which the
// update statement writes over it. It must accept only rows that
// storedRow.decode accepts, so that an update never replaces a row that
// Load would report as corrupt; it may refuse more (then Save checks the
// row in Go, in a transaction of its own). It accepts the rows this
// package writes: a holder in the exact form of platform.Identity.Marshal,
// a renewed_at in the exact form of time.RFC3339Nano, and the value
// written or one of ASCII.
var storedRowIsValid = "generation <> 0 AND ttl_ns > 0 AND (released OR NOT broken)" +
	// The holder written, which Save has parsed, as a renewal finds it
	// (equal bytes, compared first: a regular expression costs
	// microseconds), or one in the form Marshal writes. At most 4 bytes
	// a character: within platform.ParseIdentity's 4096 bytes, whatever
	// the server's encoding. Its host and boot id within the bounds of
	// platform.Identity.Validate, in bytes of UTF-8 as written, which
	// reading can only shorten (an escape stands for fewer bytes than
	// its own).
	` AND (holder COLLATE "C" = $10 OR char_length(holder) <= 1024 AND holder ~ ` + sqlString(holderPattern) +
	` AND octet_length(convert_to(substring(holder from ` + sqlString(`^[{]"host":"(`+jsonChar+`*)"`) + `), 'UTF8')) <= 255` +
	` AND octet_length(convert_to(substring(holder from ` + sqlString(`^[{]"host":"`+jsonChar+`*","bootId":"(`+jsonChar+`+)"`) + `), 'UTF8')) <= 128)` +
	" AND renewed_at ~ " + sqlString(renewedAtPattern) +
	// The value written, which Save has validated, as a renewal finds it
	// (equal bytes: it reads back as it was written, whatever the
	// server's encoding), or one of ASCII within store.MaxValueLen bytes
	// (a release, or a new holder, writes over another value): every
	// server encoding holds ASCII a byte a character, and it reads back
	// as the same UTF-8, without NUL, which text cannot hold. Another
	// value that changes takes the slow path: in a database of encoding
	// SQL_ASCII its bytes may not be UTF-8, in others (LATIN1) its UTF-8
	// may be longer than octet_length counts.
	` AND (value COLLATE "C" = $9 OR octet_length(value) <= ` + strconv.Itoa(store.MaxValueLen) + ` AND value ~ ` + sqlString(`^[\x01-\x7f]*$`) + `)`

// holderPattern matches the JSON that platform.Identity.Marshal writes
// for a valid identity: one object, its fields in order, a non-empty boot
// id, a pid of at most 9 digits (valid: above 0, within maxPID), a start
// time and pid namespace of at most 19 digits and not 0 (within uint64).
// Strings hold no control character and only JSON's escapes.
var holderPattern = `^[{]"host":"` + jsonChar + `*","bootId":"` + jsonChar + `+","pid":[1-9][0-9]{0,8},"startTime":[1-9][0-9]{0,18}` +
	`(?:,"pidNamespace":[1-9][0-9]{0,18})?[}]$`

// jsonChar is one character of a JSON string as Marshal writes it: any
// but a quote, a backslash or a control character, or one of JSON's
// escapes. Its groups capture nothing, so that a pattern of it captures
// only what it marks.
const jsonChar = `(?:[^"\\[:cntrl:]]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))`

// renewedAtPattern matches the times that time.Parse(time.RFC3339Nano)
// reads on its fast path, with at most 9 digits of a second, and days
// that exist (29 February in leap years of the Gregorian calendar).
const renewedAtPattern = `^([0-9]{4}-((0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|(0[13-9]|1[0-2])-(29|30)|(0[13578]|1[02])-31)` +
	`|([0-9]{2}(0[48]|[2468][048]|[13579][26])|(0[048]|[2468][048]|[13579][26])00)-02-29)` +
	`T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.][0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`

// sqlString quotes s as an escape string constant, read the same way
// whatever standard_conforming_strings says.
func sqlString(s string) string {
	return "E'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `'`, `''`) + "'"
}
