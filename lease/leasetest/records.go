package leasetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivus/collab/lease/store"
)

func testLoadMissing(t *testing.T, r store.Repository) {
	wantNoRecord(t, r, "missing")
}

func testCreateWithZero(t *testing.T, r store.Repository) {
	s := snapshot(1)
	rev := mustSave(t, r, "k", s, 0)
	wantRecord(t, r, "k", s, rev)
}

func testCreateTwiceConflicts(t *testing.T, r store.Repository) {
	first := snapshot(1)
	rev := mustSave(t, r, "k", first, 0)
	_, err := r.Save(t.Context(), "k", snapshot(2), 0)
	wantConflict(t, err, "k", 0, rev)
	wantRecord(t, r, "k", first, rev)
}

func testSaveOverRevision(t *testing.T, r store.Repository) {
	seen := map[store.Revision]bool{}
	var rev store.Revision
	for gen := store.Token(1); gen <= 5; gen++ {
		s := snapshot(gen)
		rev = mustSave(t, r, "k", s, rev)
		if seen[rev] {
			t.Fatalf("save %d returned revision %d again", gen, rev)
		}
		seen[rev] = true
		wantRecord(t, r, "k", s, rev)
	}
}

func testStaleRevisionConflicts(t *testing.T, r store.Repository) {
	r1 := mustSave(t, r, "k", snapshot(1), 0)
	s2 := snapshot(2)
	r2 := mustSave(t, r, "k", s2, r1)
	_, err := r.Save(t.Context(), "k", snapshot(3), r1)
	wantConflict(t, err, "k", r1, r2)
	wantRecord(t, r, "k", s2, r2)
	// A revision never issued conflicts too.
	future := r1 + r2 + 1000
	_, err = r.Save(t.Context(), "k", snapshot(3), future)
	wantConflict(t, err, "k", future, r2)
	wantRecord(t, r, "k", s2, r2)
	// So does a revision on a key without a record.
	_, err = r.Save(t.Context(), "other", snapshot(3), r2)
	wantConflict(t, err, "other", r2, 0)
	wantNoRecord(t, r, "other")
}

func testTombstoneRoundTrip(t *testing.T, r store.Repository) {
	held := snapshot(7)
	rev := mustSave(t, r, "k", held, 0)
	tomb := held
	tomb.Released = true
	rev = mustSave(t, r, "k", tomb, rev)
	wantRecord(t, r, "k", tomb, rev)
	// The next holder acquires over the tombstone with the next generation.
	next := snapshot(8)
	rev = mustSave(t, r, "k", next, rev)
	wantRecord(t, r, "k", next, rev)
	// An operator breaks it: a tombstone of the next generation, marked.
	broken := snapshot(9)
	broken.Released, broken.Broken = true, true
	rev = mustSave(t, r, "k", broken, rev)
	wantRecord(t, r, "k", broken, rev)
	// It is a tombstone like another: the next holder acquires over it.
	after := snapshot(10)
	rev = mustSave(t, r, "k", after, rev)
	wantRecord(t, r, "k", after, rev)
}

func testManyKeysIndependent(t *testing.T, r store.Repository) {
	const n = 20
	revs := make([]store.Revision, n)
	key := func(i int) string { return fmt.Sprintf("key-%d", i) }
	for i := range n {
		revs[i] = mustSave(t, r, key(i), snapshot(store.Token(i+1)), 0)
	}
	_, err := r.Save(t.Context(), key(3), snapshot(99), revs[3]+1)
	wantConflict(t, err, key(3), revs[3]+1, revs[3])
	revs[5] = mustSave(t, r, key(5), snapshot(100), revs[5])
	for i := range n {
		want := snapshot(store.Token(i + 1))
		if i == 5 {
			want = snapshot(100)
		}
		wantRecord(t, r, key(i), want, revs[i])
	}
	wantNoRecord(t, r, key(n))
}

// awkwardKeys are valid keys that a careless repository confuses with
// each other, with paths, or with its own files.
func awkwardKeys() []string {
	return []string{
		"a/b", "a//b", "/", "/leading", "trailing/", "a\\b", "..", ".", "...", "../../escape", "a/../b", "./a",
		"Key", "key", "KEY", "über/straße", "日本語のキー", "emoji 🙂", "with space", "tab\tand\nnewline",
		"percent%2f", "_2f", "_", "-", "x.json", "x.lock", "x.fence", ".locks", ".fences", ".hidden",
		"con", "CON", "nul", "'quote\"", "semi;colon", "?*<>|:",
		strings.Repeat("k", store.MaxKeyLen),
		strings.Repeat("k", store.MaxKeyLen-1),
		strings.Repeat("é", store.MaxKeyLen/2),
		strings.Repeat("/", store.MaxKeyLen),
		strings.Repeat("a/", store.MaxKeyLen/2),
		strings.Repeat(".", store.MaxKeyLen),
	}
}

func testAwkwardKeys(t *testing.T, r store.Repository) {
	keys := awkwardKeys()
	revs := make([]store.Revision, len(keys))
	for i, k := range keys {
		revs[i] = mustSave(t, r, k, snapshot(store.Token(i+1)), 0)
	}
	// Loading after all saves shows that no two keys share a record.
	for i, k := range keys {
		wantRecord(t, r, k, snapshot(store.Token(i+1)), revs[i])
	}
	for i, k := range keys {
		s := snapshot(store.Token(i + 1000))
		revs[i] = mustSave(t, r, k, s, revs[i])
		wantRecord(t, r, k, s, revs[i])
	}
}

// invalidKeys are keys every repository refuses.
var invalidKeys = []string{"", strings.Repeat("k", store.MaxKeyLen+1), "a\x00b", "\x00", "bad \xff utf-8"}

func testInvalidKeys(t *testing.T, r store.Repository) {
	for _, k := range invalidKeys {
		_, _, err := r.Load(t.Context(), k)
		wantKeyError(t, "Load", err, k)
		_, err = r.Save(t.Context(), k, snapshot(1), 0)
		wantKeyError(t, "Save", err, k)
		unlock, err := r.Fence(t.Context(), k)
		if unlock != nil {
			unlock()
			t.Fatalf("Fence(%q) returned an unlock for an invalid key", k)
		}
		wantKeyError(t, "Fence", err, k)
	}
}

func testEndedContext(t *testing.T, r store.Repository) {
	cause := errors.New("caller gave up")
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(cause)
	if _, _, err := r.Load(ctx, "k"); !errors.Is(err, cause) {
		t.Fatalf("Load with an ended context = %v, want its cause", err)
	}
	if _, err := r.Save(ctx, "k", snapshot(1), 0); !errors.Is(err, cause) {
		t.Fatalf("Save with an ended context = %v, want its cause", err)
	}
	wantNoRecord(t, r, "k")
	rev := mustSave(t, r, "k", snapshot(1), 0)
	if _, err := r.Save(ctx, "k", snapshot(2), rev); !errors.Is(err, cause) {
		t.Fatalf("Save with an ended context = %v, want its cause", err)
	}
	wantRecord(t, r, "k", snapshot(1), rev)
}

// contenders is how many goroutines race for one revision.
const contenders = 16

func testConcurrentSavesOneWins(t *testing.T, r store.Repository) {
	raceRevisions(t, []store.Repository{r})
}

// raceRevisions races contenders goroutines, spread over repos (handles
// on one repository), to create a record and then, raceRounds times, to
// save over its last revision.
func raceRevisions(t *testing.T, repos []store.Repository) {
	t.Run("create", func(t *testing.T) { raceSaves(t, repos, "fresh", 0, 100) })
	t.Run("update", func(t *testing.T) {
		// One round's goroutines may happen to run one after another; a
		// compare-and-swap that is not atomic shows in some round.
		rev := mustSave(t, repos[0], "existing", snapshot(1), 0)
		for round := range raceRounds {
			rev = raceSaves(t, repos, "existing", rev, store.Token(100*(round+1)))
		}
	})
}

// raceRounds is how many times the update race runs, each over the last
// winner's revision.
const raceRounds = 10

// raceSaves has contenders goroutines, the i-th through repos[i%len(repos)],
// save over expected at once, with generations from firstGen, checks that
// exactly one wins and every other sees the winner's revision, and returns
// the winner's revision.
func raceSaves(t *testing.T, repos []store.Repository, key string, expected store.Revision, firstGen store.Token) store.Revision {
	type result struct {
		gen store.Token
		rev store.Revision
		err error
	}
	start := make(chan struct{})
	results := make(chan result, contenders)
	var wg sync.WaitGroup
	for i := range contenders {
		gen := firstGen + store.Token(i)
		r := repos[i%len(repos)]
		wg.Go(func() {
			<-start
			rev, err := r.Save(t.Context(), key, snapshot(gen), expected)
			results <- result{gen, rev, err}
		})
	}
	close(start)
	wg.Wait()
	close(results)
	var winners []result
	var losers []error
	for res := range results {
		if res.err == nil {
			winners = append(winners, res)
		} else {
			losers = append(losers, res.err)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d of %d saves over revision %d through %d handles succeeded, want exactly 1 (others failed with %v)", len(winners), contenders, expected, len(repos), losers)
	}
	win := winners[0]
	for _, err := range losers {
		wantConflict(t, err, key, expected, win.rev)
	}
	wantRecord(t, repos[0], key, snapshot(win.gen), win.rev)
	return win.rev
}

// testInterleavedSavesOneWins: of two saves over one revision, exactly one
// wins, however the second falls into the first (see interleaveSaves).
func testInterleavedSavesOneWins(t *testing.T, r store.Repository) {
	interleaveSaves(t, r, r)
}

// interleaveSaves checks the compare-and-swap where a race cannot be
// relied on to: goroutines that race may well run one after another, and
// on one processor they always do. A Save through a is stopped
// where it looks at its context (every Save does, first, and one on a
// database looks again at each call it makes), at its first look, then at
// its second, and so on, and while it is stopped a Save through b over
// the same revision runs. A store that reads, compares and writes under
// a lock it holds shared, or under none, lets b read the revision that a
// has read and compared, and both write: it fails here every time,
// provided it looks at its context between its read and its write. One
// that does not (a file store's system calls take no context) shows
// only in the races of ConcurrentSavesOneWins.
//
// A correct store makes b wait while a is stopped inside its exclusive
// section; b is let wait heldProbe, then a goes on.
func interleaveSaves(t *testing.T, a, b store.Repository) {
	rev := mustSave(t, a, "k", snapshot(1), 0)
	for look := int64(1); look <= maxLooks; look++ {
		var more bool
		rev, more = interleave(t, a, b, "k", rev, look, store.Token(10*look))
		if !more {
			return
		}
	}
}

// maxLooks bounds the looks at its context at which interleaveSaves stops
// a save; a save that looks more often is checked at its first maxLooks.
const maxLooks = 64

// interleave runs a's save over expected, stopped at its look-th look at
// its context, and b's over expected meanwhile; it checks that exactly
// one wins, and returns the winner's revision and whether a's save looked
// that often (later looks may be worth stopping at too).
func interleave(t *testing.T, a, b store.Repository, key string, expected store.Revision, look int64, gen store.Token) (store.Revision, bool) {
	t.Helper()
	type result struct {
		rev store.Revision
		err error
	}
	ctx := newPausingContext(t.Context(), look)
	defer ctx.resume()
	first := make(chan result, 1)
	go func() {
		rev, err := a.Save(ctx, key, snapshot(gen), expected)
		first <- result{rev, err}
	}()
	select {
	case <-ctx.paused:
	case res := <-first:
		// a finished alone: it looked fewer times than look, or it was
		// stopped on a goroutine of its own that it did not wait for.
		if res.err != nil {
			t.Fatalf("Save(%q, generation %d, over %d) alone: %v", key, gen, expected, res.err)
		}
		wantRecord(t, a, key, snapshot(gen), res.rev)
		return res.rev, ctx.looks.Load() >= look
	}
	second := make(chan result, 1)
	go func() {
		rev, err := b.Save(t.Context(), key, snapshot(gen+1), expected)
		second <- result{rev, err}
	}()
	probe := time.NewTimer(heldProbe)
	select {
	case <-probe.C: // b waits for a, as it should inside a's exclusive section
	case res := <-second:
		second <- res
	}
	probe.Stop()
	ctx.resume()
	resA, resB := <-first, <-second
	switch {
	case resA.err == nil && resB.err == nil:
		t.Fatalf("two saves over revision %d both succeeded, with revisions %d and %d: the second ran while the first was stopped where it looked at its context (look %d), between its read and its write", expected, resA.rev, resB.rev, look)
	case resA.err == nil:
		wantConflict(t, resB.err, key, expected, resA.rev)
		wantRecord(t, a, key, snapshot(gen), resA.rev)
		return resA.rev, true
	case resB.err == nil:
		wantConflict(t, resA.err, key, expected, resB.rev)
		wantRecord(t, a, key, snapshot(gen+1), resB.rev)
		return resB.rev, true
	}
	t.Fatalf("two saves over revision %d both failed, the first stopped where it looked at its context (look %d): %v; %v", expected, look, resA.err, resB.err)
	return 0, false
}

// pausingContext is a context that stops the call to its Done or Err
// that is its look-th (both count) until resume, or until the context it
// wraps ends; the calls before and after it pass at once.
type pausingContext struct {
	context.Context
	look    int64
	looks   atomic.Int64
	paused  chan struct{} // closed when the look-th call begins
	resumed chan struct{}
	once    sync.Once
}

func newPausingContext(parent context.Context, look int64) *pausingContext {
	return &pausingContext{Context: parent, look: look, paused: make(chan struct{}), resumed: make(chan struct{})}
}

func (c *pausingContext) Done() <-chan struct{} {
	c.count()
	return c.Context.Done()
}

func (c *pausingContext) Err() error {
	c.count()
	return c.Context.Err()
}

func (c *pausingContext) count() {
	if c.looks.Add(1) != c.look {
		return
	}
	close(c.paused)
	select {
	case <-c.resumed:
	case <-c.Context.Done():
	}
}

// resume lets the stopped call go on; it is idempotent.
func (c *pausingContext) resume() { c.once.Do(func() { close(c.resumed) }) }

// invalidSnapshots are snapshots no lease record holds, each with the
// field it breaks.
func invalidSnapshots() []fieldCase {
	noGen, noHolder, longHost, negTTL, noTTL := snapshot(1), snapshot(1), snapshot(1), snapshot(1), snapshot(1)
	noGen.Generation = 0
	noHolder.Holder.PID = -7
	longHost.Holder.Host = strings.Repeat("h", 5000)
	negTTL.TTL = -time.Second
	noTTL.TTL = 0
	farYear, dayZone := snapshot(1), snapshot(1)
	farYear.RenewedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	dayZone.RenewedAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("far", 24*3600))
	longValue, nulValue, badValue := snapshot(1), snapshot(1), snapshot(1)
	longValue.Value = strings.Repeat("v", store.MaxValueLen+1)
	nulValue.Value = "a\x00b"
	badValue.Value = "\xc3("
	return []fieldCase{{"generation", noGen}, {"holder", noHolder}, {"holder", longHost}, {"ttl", negTTL}, {"ttl", noTTL},
		{"renewedAt", farYear}, {"renewedAt", dayZone}, {"value", longValue}, {"value", nulValue}, {"value", badValue}}
}

type fieldCase struct {
	field string
	snap  store.Snapshot
}

// testInvalidSnapshots: a save of a snapshot that no record holds fails
// with a *store.SnapshotFieldError naming the field, and writes nothing,
// alone or in a batch, where the other writes go through.
// testPublishedValue: a holder's published value round-trips as it
// changes from save to save of one holder (a renewal), is cleared by a
// save without one, and is kept whole at its longest.
func testPublishedValue(t *testing.T, r store.Repository) {
	s := snapshot(1)
	var rev store.Revision
	for _, v := range []string{"10.0.0.7:8080", "10.0.0.7:8080", "version 2 ü", "", "", strings.Repeat("é", store.MaxValueLen/2), "x"} {
		s.Value = v
		s.RenewedAt = s.RenewedAt.Add(time.Second)
		rev = mustSave(t, r, "k", s, rev)
		wantRecord(t, r, "k", s, rev)
	}
}

func testInvalidSnapshots(t *testing.T, r store.Repository) {
	good := snapshot(1)
	rev := mustSave(t, r, "held", good, 0)
	for i, c := range invalidSnapshots() {
		_, err := r.Save(t.Context(), "new", c.snap, 0)
		wantFieldError(t, "Save of a new record", err, c.field)
		wantNoRecord(t, r, "new")
		_, err = r.Save(t.Context(), "held", c.snap, rev)
		wantFieldError(t, "Save over a record", err, c.field)
		wantRecord(t, r, "held", good, rev)
		b, ok := r.(store.BatchSaver)
		if !ok {
			continue
		}
		other := fmt.Sprintf("other-%d", i)
		revs, errs := b.SaveBatch(t.Context(), []store.Write{{Key: "new", Snapshot: c.snap}, {Key: other, Snapshot: good}})
		wantFieldError(t, "SaveBatch", errs[0], c.field)
		if errs[1] != nil {
			t.Fatalf("SaveBatch: the valid write beside an invalid one failed: %v", errs[1])
		}
		wantNoRecord(t, r, "new")
		wantRecord(t, r, other, good, revs[1])
	}
}

func wantFieldError(t *testing.T, call string, err error, field string) {
	t.Helper()
	var fe *store.SnapshotFieldError
	if !errors.As(err, &fe) || fe.Field != field {
		t.Fatalf("%s of a snapshot with a bad %s = %v, want a *store.SnapshotFieldError of that field", call, field, err)
	}
}
