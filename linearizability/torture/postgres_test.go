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
		Server:  ServerConfig{Faults: srv, Every: 700 * time.Millisecond, MinStops: 2, MinPauses: 2},
		Command: testCommand()}
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
	if s.Lost == 0 || len(losses) == 0 {
		t.Fatalf("no holder declared a lease lost: %+v", s)
	}
	if !lostAcrossOutage(res.History, losses, s.Outages, res.Config.TTL) {
		t.Fatalf("no lease held before a server stop was declared lost by its holder during it: losses %v, outages %v", losses, s.Outages)
	}
}

// lostAcrossOutage reports whether a lease acquired before a server
// stop was declared lost by its holder during the stop or within a few
// TTLs of its end: a holder that cannot renew declares loss by the TTL
// rule. (That later acquisitions of the key get larger tokens, and no
// stale write is accepted, is the linearizability check's part.)
func lostAcrossOutage(h lz.History, losses []loss, outages []Outage, ttl time.Duration) bool {
	acquired := func(key string, pred func(e lz.Event) bool) bool {
		for _, e := range h.Events {
			if e.Kind == lz.Acquire && e.Key == key && !e.Open && e.Output.Status == lz.OK && pred(e) {
				return true
			}
		}
		return false
	}
	for _, o := range outages {
		if o.Kind != ServerStop {
			continue
		}
		for _, l := range losses {
			if l.At < o.From || l.At > o.To+3*ttl {
				continue
			}
			if acquired(l.Key, func(e lz.Event) bool {
				return e.Process == l.Process && e.Output.Gen == l.Token && time.Duration(e.Return) < o.From
			}) {
				return true
			}
		}
	}
	return false
}
