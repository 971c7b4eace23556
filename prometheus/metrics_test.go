package prometheus_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	collabprom "github.com/rivus/collab/prometheus"

	"github.com/rivus/collab/lanes"
	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/platform/sqlite"
	"github.com/rivus/collab/plock"
)

// TestScrape: lanes, a lease manager and process locks feed the adapter,
// and a scrape over loopback shows each of their metrics.
func TestScrape(t *testing.T) {
	reg := prometheus.NewRegistry()
	var l *lanes.Lanes[string]
	lm, err := collabprom.NewLanes(reg, "", func() time.Duration { return l.LongestRunning() })
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	l, err = lanes.New(t.Context(), lanes.Config[string]{MaxConcurrent: 1, MaxQueued: 1, Metrics: lm,
		Activate: func(ctx context.Context, key string) error { <-release; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := l.Wake("a"); err != nil || r != lanes.Started {
		t.Fatalf("wake a: %v %v", r, err)
	}
	if r, err := l.Wake("a"); err != nil || r != lanes.Queued {
		t.Fatalf("wake a again: %v %v", r, err)
	}
	if _, err := l.Wake("b"); !errors.Is(err, lanes.ErrQueueFull) {
		t.Fatalf("wake b: %v, want the queue full", err)
	}

	em, err := collabprom.NewLease(reg, "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := lease.NewManager(lease.Config{TTL: time.Minute, Heartbeat: 10 * time.Second, Repository: lease.NewMemoryRepository(), Metrics: em})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Acquire(t.Context(), "job"); err != nil {
		t.Fatal(err)
	}

	pm, err := collabprom.NewPlock(reg, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "app.lock")
	held, err := plock.Acquire(t.Context(), sqlite.OS(), path, plock.Options{Metrics: pm})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	if _, err := plock.Acquire(t.Context(), sqlite.OS(), path, plock.Options{Metrics: pm}); !errors.Is(err, plock.ErrHeld) {
		t.Fatalf("a second lock: %v", err)
	}

	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	page := scrape(t, srv.URL)
	close(release)
	l.Close()
	for _, want := range []string{
		"collab_lanes_depth 1", // the owed follow-up of a
		"collab_lanes_running 1",
		`collab_lanes_wakes_total{result="started"} 1`,
		`collab_lanes_wakes_total{result="queued"} 1`,
		`collab_lanes_wakes_total{result="queue_full"} 1`,
		"collab_lanes_longest_running_seconds ",
		"collab_lease_held 1",
		`collab_lease_acquisitions_total{how="free"} 1`,
		"collab_plock_acquire_seconds_count 1",
		"collab_plock_refused_total 1",
	} {
		if !strings.Contains(page, "\n"+want) {
			t.Errorf("the scrape has no %q", want)
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", page)
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("the test server listens on %s, not loopback", url)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return "\n" + string(body)
}
