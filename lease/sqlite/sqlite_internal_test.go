package sqlite

import (
	"database/sql"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	platformsqlite "github.com/rivus/collab/platform/sqlite"
)

// TestRowIsValidImpliesDecode: the check of updateChecked accepts
// only rows that decodeRow accepts (else a save could write over a row
// that Load reports as corrupt), and accepts the rows a holder renews
// (else every renewal would read and decode its row). SQLite evaluates it
// on thousands of rows: the times Format writes, random mutations of
// them, values out of range, and published values that the save does
// not write, or that no record holds. The leases table is made without
// STRICT, as another program may have made it, so that it can hold a
// BLOB where text belongs.
func TestRowIsValidImpliesDecode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	raw, err := platformsqlite.Opener().Open(path, platform.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	loose := strings.Replace(createLeasesTable, ") STRICT, WITHOUT ROWID", ") WITHOUT ROWID", 1)
	if _, err := raw.Exec(loose); err != nil || loose == createLeasesTable {
		t.Fatalf("%s: %v", loose, err)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(nil, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	holder := string(platform.Identity{Host: "h", BootID: "b", PID: 7, StartTime: 9}.Marshal())
	// The value the save publishes (?11), and the stored row's.
	const published = "10.0.0.7:8080 ü"
	rng := rand.New(rand.NewPCG(3, 4))
	type row struct {
		gen, ttl  int64
		holder    string
		renewedAt string
		canonical bool // as a holder writes it: the check must accept it
		released  bool
		broken    bool
		value     any
	}
	var rows []row
	for range 5000 {
		tm := time.Date(rng.IntN(10000), time.Month(1+rng.IntN(12)), 1+rng.IntN(31), rng.IntN(24), rng.IntN(60), rng.IntN(60),
			[]int{0, rng.IntN(1e9), rng.IntN(1000) * 1e6}[rng.IntN(3)], time.FixedZone("", (rng.IntN(48)-24)*1800))
		if tm.Year() > 9999 {
			continue
		}
		s := tm.Format(time.RFC3339Nano)
		rows = append(rows, row{1, 1, holder, s, true, false, false, published}, row{1, 1, holder, mutate(rng, s), false, false, false, published})
	}
	for _, s := range []string{"2000-02-29T00:00:00Z", "2024-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2023-02-29T00:00:00Z",
		"2026-04-31T00:00:00Z", "2026-12-31T23:59:59.999999999-23:59", "2026-01-01T00:00:60Z", "2026-01-01T00:00:00+24:00",
		"2026-01-01T00:00:00.Z", "2026-01-01T00:00:00.1234567891Z", "2026-01-01T00:00:00,5Z", "2026-01-01T00:00:00z", "2026-01-01t00:00:00Z",
		"2026-01-01T00:00:00+02:00 ", " 2026-01-01T00:00:00Z", "2026-01-01T00:00:00+0200", "2026-01-01T00:00:00.5+02:00x", ""} {
		rows = append(rows, row{1, 1, holder, s, false, false, false, published})
	}
	valid := "2026-01-01T00:00:00Z"
	rows = append(rows, row{0, 1, holder, valid, false, false, false, published}, row{1, 0, holder, valid, false, false, false, published}, row{1, -1, holder, valid, false, false, false, published},
		row{-1, 1, holder, valid, true, false, false, published}, row{1, 1, holder + " ", valid, false, false, false, published}, row{1, 1, strings.Replace(holder, `"pid":7`, `"pid":-7`, 1), valid, false, false, false, published},
		row{1, 1, holder, valid, true, true, false, published}, row{1, 1, holder, valid, true, true, true, published}, row{1, 1, holder, valid, false, false, true, published})

	for _, v := range []any{"", "10.0.0.8:8080", published + " ", published + "\x00", "a\x00b", "\xc3(", published[:len(published)-1],
		strings.Repeat("v", store.MaxValueLen+1), []byte(published), []byte{}} {
		rows = append(rows, row{1, 1, holder, valid, false, false, false, v})
	}

	tx, err := r.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	for i, w := range rows {
		if _, err := tx.Exec(insertLease, 1, w.gen, w.holder, w.released, w.renewedAt, w.ttl, key(i), nil, nil, w.broken, w.value); err != nil {
			t.Fatal(err)
		}
	}
	res, err := tx.Query(`SELECT key, revision, generation, holder, released, renewed_at, ttl_ns, broken, value, `+rowIsValid+` FROM leases`,
		nil, nil, holder, nil, nil, nil, nil, nil, true, nil, published)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	accepted, n := 0, 0
	for res.Next() {
		var k string
		var cols [8]any
		var checked sql.NullBool // NULL, as WHERE reads it, is false
		if err := res.Scan(&k, &cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5], &cols[6], &cols[7], &checked); err != nil {
			t.Fatal(err)
		}
		ok := checked.Valid && checked.Bool
		n++
		w := rows[index(k)]
		_, derr := decodeRow(cols)
		switch {
		case ok && derr != nil:
			t.Errorf("the check accepts %+v, which decodeRow refuses: %v", w, derr)
		case !ok && w.canonical:
			t.Errorf("the check refuses %+v, as a holder writes it", w)
		}
		if ok {
			accepted++
		}
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(rows) {
		t.Fatalf("read %d rows of %d", n, len(rows))
	}
	t.Logf("the check accepts %d of %d rows", accepted, n)
}

func key(i int) string { return string(rune('a'+i%26)) + strings.Repeat("x", i/26) }

func index(k string) int { return int(k[0]-'a') + 26*(len(k)-1) }

// mutate changes s at one or two random places.
func mutate(rng *rand.Rand, s string) string {
	const alphabet = "0123456789-:TZ.,+ tz\x00"
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
	return string(b)
}
