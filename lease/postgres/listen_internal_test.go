package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// newTestListener returns a listener on a channel of this test alone,
// with linger, and a connection to notify it on; both end with the test.
func newTestListener(t *testing.T, linger time.Duration) (*listener, func(key string)) {
	cfg, err := pgx.ParseConfig(internalTestURL(t))
	if err != nil {
		t.Fatal(err)
	}
	l := &listener{channel: channelOf(t.Name()), config: cfg, linger: linger}
	t.Cleanup(l.close)
	conn, err := pgx.ConnectConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return l, func(key string) {
		if _, err := conn.Exec(t.Context(), notifyQuery, l.channel, key); err != nil {
			t.Fatal(err)
		}
	}
}

// mustWatch starts a watch of key on l.
func mustWatch(t *testing.T, l *listener, key string) (<-chan struct{}, func()) {
	t.Helper()
	c, stop, err := l.watch(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return c, stop
}

// mustHear notifies key and waits for the watch c to wake.
func mustHear(t *testing.T, notify func(string), key string, c <-chan struct{}) {
	t.Helper()
	notify(key)
	select {
	case <-c:
	case <-t.Context().Done():
		t.Fatalf("a notification of %q did not wake its watch", key)
	}
}

// running returns the done channel of l's loop, nil if none runs.
func (l *listener) running() chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.done
}

// A watch after the last one ended, within the linger, listens on the
// same connection, and hears what is notified.
func TestListenerLingersForTheNextWatch(t *testing.T) {
	l, notify := newTestListener(t, time.Hour)
	_, stop := mustWatch(t, l, "k")
	first := l.running()
	stop()
	if l.running() != first || first == nil {
		t.Fatal("the loop ended with its last watch, within the linger")
	}
	c, stop := mustWatch(t, l, "k")
	defer stop()
	if l.running() != first {
		t.Fatal("a watch within the linger started a loop of its own")
	}
	mustHear(t, notify, "k", c)
}

// The loop ends once the linger passes without a watch, and a later
// watch listens again.
func TestListenerEndsAfterTheLinger(t *testing.T) {
	l, notify := newTestListener(t, time.Millisecond)
	_, stop := mustWatch(t, l, "k")
	first := l.running()
	stop()
	select {
	case <-first:
	case <-t.Context().Done():
		t.Fatal("the loop outlived its linger")
	}
	if l.running() != nil {
		t.Fatal("an ended loop is still the running one")
	}
	c, stop := mustWatch(t, l, "k")
	defer stop()
	if l.running() == nil || l.running() == first {
		t.Fatal("a watch after the linger did not start a loop")
	}
	mustHear(t, notify, "k", c)
}

// Close ends a lingering loop at once.
func TestListenerCloseEndsTheLinger(t *testing.T) {
	l, _ := newTestListener(t, time.Hour)
	_, stop := mustWatch(t, l, "k")
	first := l.running()
	stop()
	l.close()
	select {
	case <-first:
	default:
		t.Fatal("close returned with the lingering loop running")
	}
}
