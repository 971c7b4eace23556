//go:build unix

package torture

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	lz "github.com/rivus/collab/linearizability"
)

// pgServer returns the test server's URL and its faults, from
// COLLAB_TEST_PGFAULT_URL and COLLAB_TEST_PGFAULT_DIR (the data
// directory). Without them the test is skipped, or fails under CI.
func pgServer(t *testing.T) (string, *PGServer) {
	url, dir := os.Getenv("COLLAB_TEST_PGFAULT_URL"), os.Getenv("COLLAB_TEST_PGFAULT_DIR")
	if url == "" || dir == "" {
		msg := "COLLAB_TEST_PGFAULT_URL and COLLAB_TEST_PGFAULT_DIR are not both set (scripts/pg-test-server.sh starts a server; use one of its own: this test stops it)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	pgCtl, err := FindPgCtl()
	if err != nil {
		t.Fatalf("pg_ctl: %v", err)
	}
	return url, &PGServer{PgCtl: pgCtl, Data: dir, User: "postgres"}
}

// ensureRunning continues the server if paused and starts it if it
// does not answer, so that the tests after this one find it running.
func ensureRunning(t *testing.T, url string, srv *PGServer) {
	if err := srv.Resume(); err != nil {
		t.Error(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err == nil {
		_ = conn.Close(ctx)
		return
	}
	if err := srv.Start(); err != nil {
		t.Errorf("the server is down and does not start: %v", err)
	}
}

// TestPostgresFaults runs a campaign on PostgreSQL with workers killed
// and paused and the server stopped (immediate) and restarted and its
// postmaster paused: the history must be linearizable, the faults made,
// and some holder must have declared a lease lost during a server stop
// that another process acquired again after it.
//
// Whether a stop finds a worker holding a lease depends on the timing
// of the workers: rather than hope one does within a time, the campaign
// runs until a holder cut off by a stop has declared its lease lost
// (Server.MinCutOff), so the verdict does not depend on the machine's
// speed, only the run's length does. Its many operations of unknown
// outcome (every try while the server is down) cost the check little
// (see linearizability's reduce): it takes well under a second, far from
// CheckTimeout.
func TestPostgresFaults(t *testing.T) {
	url, srv := pgServer(t)
	schema := "collab_torture_test_" + time.Now().Format("20060102150405.000000")
	t.Cleanup(func() {
		ensureRunning(t, url, srv)
		if err := dropSchema(context.Background(), url, schema); err != nil {
			t.Error(err)
		}
	})
	cfg := Config{Dir: t.TempDir(), Store: StorePostgres, PostgresURL: url, PostgresSchema: schema, Seed: 11,
		Workers: 3, Keys: 3, Duration: 10 * time.Second, KillEvery: 800 * time.Millisecond,
		PauseEvery: 700 * time.Millisecond, MinKills: 2, MinPauses: 2, CheckTimeout: 25 * time.Second,
		Server:  ServerConfig{Faults: srv, Every: 700 * time.Millisecond, MinStops: 2, MinPauses: 2, MinCutOff: 1},
		Command: testCommand()}
	// A bound for a machine loaded far beyond what the run needs (tens of
	// seconds), not a time it is expected to take.
	cfg.Deadline = 3*time.Minute + 2*cfg.CheckTimeout
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res.Print(&out)
	t.Log("\n" + out.String())
	if res.Report.Verdict != lz.Linearizable {
		t.Fatalf("verdict %v, seed %d", res.Report.Verdict, res.Config.Seed)
	}
	s := res.Stats
	if s.Kills < 2 || s.Pauses < 2 || s.ServerStops < 2 || s.ServerPauses < 2 || res.Counts[lz.Write]["ok"] == 0 {
		t.Fatalf("vacuous campaign: %+v, counts %v", s, res.Counts)
	}
	losses, err := readLosses(res.Config.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := lostAcrossOutage(res.History, losses, s.Outages, res.Config.TTL); s.CutOff == 0 || n < s.CutOff {
		t.Fatalf("%d holders cut off by a server stop counted during the run, %d in the history: losses %v, outages %v", s.CutOff, n, losses, s.Outages)
	}
}

// lostAcrossOutage counts the leases acquired before a server stop that
// their holders declared lost during the stop or within a few TTLs of its
// end (cutOff), finding the acquisitions in the merged history, as a
// check of the count the controller keeps as the files grow.
func lostAcrossOutage(h lz.History, losses []loss, outages []Outage, ttl time.Duration) int {
	acquired := make(map[heldLease]time.Duration)
	for _, e := range h.Events {
		if e.Kind == lz.Acquire && !e.Open && e.Output.Status == lz.OK {
			acquired[heldLease{e.Process, e.Key, e.Output.Gen}] = time.Duration(e.Return)
		}
	}
	return cutOff(losses, outages, ttl, func(l heldLease) (time.Duration, bool) {
		at, ok := acquired[l]
		return at, ok
	})
}
