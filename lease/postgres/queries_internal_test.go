package postgres

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// internalTestURL returns the test database's URL, as testURL in the
// package's other tests: it skips the test without one, except in CI,
// where a missing server is a broken set-up.
func internalTestURL(t *testing.T) string {
	t.Helper()
	url := os.Getenv("COLLAB_TEST_POSTGRES_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("COLLAB_TEST_POSTGRES_URL is not set")
		}
		t.Skip("COLLAB_TEST_POSTGRES_URL is not set")
	}
	return url
}

// TestStoredRowIsValidImpliesDecode: the update's check on the stored
// row accepts only rows that decode accepts (else an update could write
// over a row that Load reports as corrupt), and accepts the rows this
// package writes (else every save would take the slow path). The server
// evaluates it on thousands of holders and times (the forms Marshal and
// Format write, and random mutations of them) and on values, stored and
// written.
func TestStoredRowIsValidImpliesDecode(t *testing.T) {
	url := internalTestURL(t)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rng := rand.New(rand.NewPCG(1, 2))

	var written []platform.Identity
	// Hosts and boot ids at the bounds of Validate (255 and 128 bytes),
	// of one-byte, two-byte and escaped characters, and beyond them.
	hosts := []string{"", "h", "ünï", `q"uote\back/slash`, "ctl\x01\n\t", "<&>", "\u2028", "bad \xff utf-8", strings.Repeat("h", 1000),
		strings.Repeat("h", 255), strings.Repeat("h", 256), strings.Repeat("é", 127) + "h", strings.Repeat("é", 128), strings.Repeat("<", 255), strings.Repeat("\x01", 256)}
	boots := []string{"0f4c2b7e-5a1d", strings.Repeat("b", 128), strings.Repeat("b", 129), strings.Repeat("ü", 64), strings.Repeat("ü", 64) + "b", strings.Repeat("\"", 128)}
	for i, host := range hosts {
		for j, pid := range []int{1, 42, 999_999_999} {
			for k, ns := range []uint64{0, 4026531836, 1e19 - 1, 1<<64 - 1} {
				boot := boots[(i+j+k)%len(boots)]
				written = append(written, platform.Identity{Host: host, BootID: boot, PID: pid, StartTime: uint64(rng.Int64N(1<<62)) + 1, PIDNamespace: ns})
			}
		}
	}
	var holders []string
	canonical := map[string]bool{}
	for _, id := range written {
		h := string(id.Marshal())
		holders = append(holders, h)
		// Marshal of a valid identity, of at most 1024 characters, a host
		// and boot id within Validate's bounds as written (escaped), and
		// numbers of at most 19 digits: the check must accept it. (It
		// may refuse DEL, a control character to the server.)
		canonical[h] = id.Validate() == nil && len([]rune(h)) <= 1024 && !strings.ContainsRune(h, 0x7f) && id.StartTime < 1e19 && id.PIDNamespace < 1e19 &&
			writtenLen(id.Host) <= 255 && writtenLen(id.BootID) <= 128
		for range 40 {
			holders = append(holders, mutate(rng, h, `{}":,\-0123456789 ubtnx`+"\x01"))
		}
	}
	holders = append(holders, "", "{}", "null", `{"host":"h","bootId":"b","pid":7,"startTime":9}`+"\n",
		`{"host":"h","bootId":"b","pid":7,"startTime":9,"pidNamespace":0}`, `{"host":"h","bootId":"\u0000","pid":7,"startTime":9}`,
		`{"host":"h","bootId":"b","pid":7,"startTime":9} `, strings.Repeat(`{"host":"`, 500))

	var times []string
	timesCanonical := map[string]bool{}
	for range 3000 {
		tm := time.Date(rng.IntN(10000), time.Month(1+rng.IntN(12)), 1+rng.IntN(31), rng.IntN(24), rng.IntN(60), rng.IntN(60), rng.IntN(1e9), time.FixedZone("", (rng.IntN(48)-24)*1800))
		if tm.Year() > 9999 {
			continue
		}
		s := tm.Format(time.RFC3339Nano)
		times = append(times, s)
		timesCanonical[s] = true
		times = append(times, mutate(rng, s, "0123456789-:TZ.,+ "))
	}
	times = append(times, "2000-02-29T00:00:00Z", "2024-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "0000-02-29T00:00:00Z",
		"2026-04-31T00:00:00Z", "2026-12-31T23:59:59.999999999-23:59", "2026-01-01T00:00:60Z", "2026-01-01T00:00:00+24:00")

	validHolder, validTime := `{"host":"h","bootId":"b","pid":7,"startTime":9}`, "2026-01-01T00:00:00Z"
	check := func(what string, holders, times, values, written []string, mustAccept func(i int) bool) {
		checkStoredRows(t, conn, what, holders, times, values, written, mustAccept)
	}
	check("holder", holders, repeat(validTime, len(holders)), repeat("", len(holders)), repeat("", len(holders)),
		func(i int) bool { return canonical[holders[i]] })
	check("renewed_at", repeat(validHolder, len(times)), times, repeat("", len(times)), repeat("", len(times)),
		func(i int) bool { return timesCanonical[times[i]] })

	// Values: the check must accept the value written, and a stored one
	// of ASCII within store.MaxValueLen bytes whatever is written (a
	// release, a new holder's, a changed one).
	stored := []string{"", "x", "10.0.0.7:8080", "ctl\x01\t\x7f", strings.Repeat("v", store.MaxValueLen), strings.Repeat("v", store.MaxValueLen+1),
		"é", "version 2 ü", strings.Repeat("é", store.MaxValueLen/2), strings.Repeat("é", store.MaxValueLen/2) + "v", strings.Repeat("😀", store.MaxValueLen/4),
		strings.Repeat("😀", store.MaxValueLen/4+1), "\u2028", strings.Repeat("\x7f", store.MaxValueLen), strings.Repeat("\x7f", store.MaxValueLen+1)}
	for _, v := range stored[:len(stored):len(stored)] {
		for range 10 {
			stored = append(stored, mutate(rng, v, "v\x01\x7f :"))
		}
	}
	values, writing := valueCases(stored)
	check("value", repeat(validHolder, len(values)), repeat(validTime, len(values)), values, writing, func(i int) bool {
		return mustAcceptValue(values[i], writing[i])
	})

	// Broken only in a tombstone.
	for _, flags := range [][2]bool{{false, false}, {true, false}, {true, true}, {false, true}} {
		var checked *bool
		err := conn.QueryRow(t.Context(), "SELECT "+strings.NewReplacer("$10", "$1::text", "$9", "''").Replace(storedRowIsValid)+
			" FROM (VALUES (1::bigint, 1::bigint, $2::boolean, $3::boolean, $4::text, $5::text, '')) AS c(generation, ttl_ns, released, broken, holder, renewed_at, value)",
			nil, flags[0], flags[1], validHolder, validTime).Scan(&checked)
		if err != nil {
			t.Fatal(err)
		}
		ok := checked != nil && *checked
		_, derr := storedRow{revision: 1, generation: 1, ttl: 1, holder: validHolder, renewedAt: validTime, released: flags[0], broken: flags[1]}.decode()
		written := flags[0] || !flags[1] // as this package writes rows
		switch {
		case ok && derr != nil:
			t.Errorf("released %v, broken %v: the check accepts a row decode refuses: %v", flags[0], flags[1], derr)
		case !ok && written:
			t.Errorf("released %v, broken %v: the check refuses a row as this package writes it", flags[0], flags[1])
		}
	}
}

// checkStoredRows evaluates storedRowIsValid on conn, on stored rows of
// holders, times and values under an update that writes values written
// (and a holder that does not parse: the regular expressions decide),
// and compares it with decode: it must accept no row that decode
// refuses, and every row that mustAccept says this package writes.
func checkStoredRows(t *testing.T, conn *pgx.Conn, what string, holders, times, values, written []string, mustAccept func(i int) bool) {
	t.Helper()
	// $10 is the holder written, $9 the value written.
	check := strings.NewReplacer("$10", "NULL::text", "$9", "written").Replace(storedRowIsValid)
	rows, err := conn.Query(t.Context(), "SELECT "+check+
		" FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS v(holder, renewed_at, value, written, i),"+
		" (VALUES (1::bigint, 1::bigint, false, false)) AS c(generation, ttl_ns, released, broken) ORDER BY i", holders, times, values, written)
	if err != nil {
		t.Fatal(err)
	}
	accepted, i := 0, 0
	for ; rows.Next(); i++ {
		var checked *bool // NULL, as WHERE reads it, is false
		if err := rows.Scan(&checked); err != nil {
			t.Fatal(err)
		}
		ok := checked != nil && *checked
		_, derr := storedRow{revision: 1, generation: 1, ttl: 1, holder: holders[i], renewedAt: times[i], value: values[i]}.decode()
		row := fmt.Sprintf("holder %q, renewed_at %q, value %q (writing %q)", holders[i], times[i], values[i], written[i])
		if ok && derr != nil {
			t.Errorf("the check accepts %s, which decode refuses: %v", row, derr)
		}
		if !ok && mustAccept(i) {
			t.Errorf("the check refuses %s, as this package writes it", row)
		}
		if ok {
			accepted++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if i != len(holders) {
		t.Fatalf("%s: %d rows checked of %d", what, i, len(holders))
	}
	t.Logf("%s: the check accepts %d of %d", what, accepted, len(holders))
}

// valueCases pairs each stored value with values that a save may write
// over it: itself (a renewal), none (a release), and others of ASCII and
// not.
func valueCases(stored []string) (values, writing []string) {
	for _, v := range stored {
		for _, w := range []string{v, "", "10.0.0.8:8080", "é", strings.Repeat("é", store.MaxValueLen/2)} {
			if store.ValidateValue(w) != nil {
				continue // Save refuses it before any statement
			}
			values, writing = append(values, v), append(writing, w)
		}
	}
	return values, writing
}

// mustAcceptValue reports whether the check must accept a stored value
// under a save that writes written: a valid value equal to it (a
// renewal), or of ASCII within store.MaxValueLen bytes, whatever is
// written (a release, a new holder's value, a changed one).
func mustAcceptValue(stored, written string) bool {
	ascii := strings.IndexFunc(stored, func(r rune) bool { return r > 0x7f }) < 0
	return store.ValidateValue(stored) == nil && (stored == written || ascii)
}

// TestStoredRowIsValidValueEncodings: in a database of encoding SQL_ASCII
// (whose text may hold bytes that are not UTF-8) or LATIN1 (whose text
// reads back longer as UTF-8), the check on a stored value still accepts
// only values that decode accepts. It needs to create databases, and
// skips without the privilege.
func TestStoredRowIsValidValueEncodings(t *testing.T) {
	url := internalTestURL(t)
	admin, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	latin := []string{"", "x", strings.Repeat("v", store.MaxValueLen), strings.Repeat("v", store.MaxValueLen+1), "é", "version 2 ü",
		strings.Repeat("é", store.MaxValueLen/2), strings.Repeat("é", store.MaxValueLen/2+1), strings.Repeat("é", store.MaxValueLen-1), "\u00a0\u00ff"}
	for _, tt := range []struct {
		encoding string
		stored   []string
	}{
		{"SQL_ASCII", append(latin, "\xff", "a\xc3(", strings.Repeat("\x80", 10), "\xed\xa0\x80", strings.Repeat("é", store.MaxValueLen/2)+"\xc3")},
		{"LATIN1", latin},
	} {
		t.Run(tt.encoding, func(t *testing.T) {
			cfg, err := pgx.ParseConfig(url)
			if err != nil {
				t.Fatal(err)
			}
			var b [8]byte
			_, _ = crand.Read(b[:])
			cfg.Database = "collab_test_" + strings.ToLower(tt.encoding) + "_" + hex.EncodeToString(b[:])
			db := pgx.Identifier{cfg.Database}.Sanitize()
			if _, err := admin.Exec(t.Context(), "CREATE DATABASE "+db+" TEMPLATE template0 ENCODING '"+tt.encoding+"' LC_COLLATE 'C' LC_CTYPE 'C'"); err != nil {
				// A role without CREATEDB; CI's server has one.
				if os.Getenv("CI") == "true" {
					t.Fatalf("cannot create a database of encoding %s: %v", tt.encoding, err)
				}
				t.Skipf("cannot create a database of encoding %s: %v", tt.encoding, err)
			}
			t.Cleanup(func() {
				if _, err := admin.Exec(context.Background(), "DROP DATABASE "+db); err != nil {
					t.Error(err)
				}
			})
			conn, err := pgx.ConnectConfig(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			values, writing := valueCases(tt.stored)
			n := len(values)
			validHolder, validTime := `{"host":"h","bootId":"b","pid":7,"startTime":9}`, "2026-01-01T00:00:00Z"
			checkStoredRows(t, conn, "value", repeat(validHolder, n), repeat(validTime, n), values, writing, func(i int) bool {
				return mustAcceptValue(values[i], writing[i])
			})
		})
	}
}

// writtenLen is the length of s as Marshal writes it in a JSON string.
func writtenLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b) - 2
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// mutate changes s at one or two random places: a byte deleted, replaced
// or inserted from alphabet. It keeps s valid UTF-8, as text columns are.
func mutate(rng *rand.Rand, s, alphabet string) string {
	b := []byte(s)
	for range 1 + rng.IntN(2) {
		i := rng.IntN(len(b) + 1)
		c := alphabet[rng.IntN(len(alphabet))]
		switch op := rng.IntN(3); {
		case op == 0 && i < len(b):
			b = append(b[:i:i], b[i+1:]...)
		case op == 1 && i < len(b):
			b[i] = c
		default:
			b = append(b[:i:i], append([]byte{c}, b[i:]...)...)
		}
	}
	out := strings.ToValidUTF8(string(b), "?")
	if strings.ContainsRune(out, 0) {
		panic(fmt.Sprintf("NUL in %q", out))
	}
	return out
}

// WithClock(nil) keeps the real clock: a nil clock would panic in the
// first fence wait or watch.
func TestWithClockNilIsReal(t *testing.T) {
	o := options{clock: platform.RealClock()}
	WithClock(nil)(&o)
	if o.clock == nil {
		t.Fatal("WithClock(nil) left no clock")
	}
	if o.clock != platform.RealClock() {
		t.Fatalf("WithClock(nil) set %T, want the real clock", o.clock)
	}
}
