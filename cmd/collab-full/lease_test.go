package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/internal/command"
	"github.com/rivus/collab/lease/file"
	"github.com/rivus/collab/lease/sqlite"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	platformsqlite "github.com/rivus/collab/platform/sqlite"
)

// stores are the two kinds of STORE the command takes.
func stores(t *testing.T) map[string]string {
	dir := t.TempDir()
	return map[string]string{"sqlite": filepath.Join(dir, "leases.db"), "file": "dir:" + filepath.Join(dir, "leases")}
}

func TestLeaseRunPassesKeyAndToken(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for want := 1; want <= 2; want++ {
				code, out, errOut := runCLI(t, "", "lease", "run", "--store", store, "--key", "job/1", "--",
					"sh", "-c", `echo "$COLLAB_LEASE_KEY $COLLAB_LEASE_TOKEN"`)
				if code != 0 || strings.TrimSpace(out) != "job/1 "+strconv.Itoa(want) {
					t.Fatalf("run %d: exit %d, stdout %q, stderr %q", want, code, out, errOut)
				}
			}
			code, out, errOut := runCLI(t, "", "lease", "run", "--store", store, "--key", "k", "--", "sh", "-c", "exit 4")
			if code != 4 {
				t.Fatalf("exit %d, want the command's 4; %q %q", code, out, errOut)
			}
		})
	}
}

// holdLease runs `collab lease run` with a command that holds until its
// stdin closes; it returns once the lease is held, with a func that ends
// the command and returns the exit status.
func holdLease(t *testing.T, args ...string) (end func() int) {
	t.Helper()
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		var errb bytes.Buffer
		argv := append([]string{"lease", "run"}, args...)
		argv = append(argv, "--", "sh", "-c", "echo ready; read line || true")
		done <- run(argv, stdinR, stdoutW, &errb)
		stdoutW.Close()
	}()
	if line, err := bufio.NewReader(stdoutR).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("command said %q, %v", line, err)
	}
	go io.Copy(io.Discard, stdoutR)
	return func() int {
		stdinW.Close()
		return <-done
	}
}

func TestLeaseRunHeldExits75(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			end := holdLease(t, "--store", store, "--key", "k")
			self, _ := platform.OS().Process.Self()
			code, out, errOut := runCLI(t, "", "lease", "run", "--store", store, "--key", "k", "--", "echo", "ran")
			if code != command.ExitHeld || out != "" || !strings.Contains(errOut, "held by pid") || !strings.Contains(errOut, self.Host) {
				t.Fatalf("exit %d (want %d), stdout %q, stderr %q", code, command.ExitHeld, out, errOut)
			}
			if code := end(); code != 0 {
				t.Fatalf("holder exit %d", code)
			}
		})
	}
}

// steal moves key's record in the SQLite store to the next generation,
// as another writer would: the holder's next renewal conflicts.
func steal(t *testing.T, store, key string) {
	t.Helper()
	repo, err := sqlite.Open(platformsqlite.OS(), store)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	ctx := context.Background()
	rec, _, err := repo.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	thief := rec.Snapshot
	thief.Generation++
	if _, err := repo.Save(ctx, key, thief, rec.Revision); err != nil {
		t.Fatal(err)
	}
}

// shortLease runs `collab lease run` of key k in the SQLite store, with a
// short TTL, over the shell script; it returns the command's output, and
// collab's exit status and standard error once it ends.
func shortLease(store, script string) (io.Reader, <-chan int, *bytes.Buffer) {
	stdoutR, stdoutW := io.Pipe()
	done := make(chan int, 1)
	errb := new(bytes.Buffer)
	go func() {
		done <- run([]string{"lease", "run", "--store", store, "--key", "k", "--ttl", "400ms", "--heartbeat", "50ms", "--grace", "200ms",
			"--", "sh", "-c", script}, strings.NewReader(""), stdoutW, errb)
		stdoutW.Close()
	}()
	return stdoutR, done, errb
}

func TestLeaseRunStopsTheCommandOnLoss(t *testing.T) {
	store := filepath.Join(t.TempDir(), "leases.db")
	stdoutR, done, errb := shortLease(store, "echo ready; exec sleep 60")
	if line, err := bufio.NewReader(stdoutR).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("command said %q, %v", line, err)
	}
	steal(t, store, "k")
	select {
	case code := <-done:
		if code != exitLeaseLost || !strings.Contains(errb.String(), "lost") {
			t.Fatalf("exit %d (want %d), stderr %q", code, exitLeaseLost, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the command was not stopped after the lease was lost")
	}
}

func TestLeaseLs(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if code, _, errOut := runCLI(t, "", "lease", "run", "--store", store, "--key", "done", "--", "true"); code != 0 {
				t.Fatal(errOut)
			}
			end := holdLease(t, "--store", store, "--key", "busy", "--value", "10.0.0.7:8080 v2\t")
			defer end()
			code, out, errOut := runCLI(t, "", "lease", "ls", "--store", store)
			if code != 0 || !strings.Contains(out, "VALUE") || !lineHas(out, "busy", "held") || !lineHas(out, "busy", `"10.0.0.7:8080 v2\t"`) ||
				!lineHas(out, "done", "released") {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			code, out, _ = runCLI(t, "", "lease", "ls", "--store", store, "--json")
			var rows []leaseRow
			dec := json.NewDecoder(strings.NewReader(out))
			for dec.More() {
				var r leaseRow
				if err := dec.Decode(&r); err != nil {
					t.Fatal(err)
				}
				rows = append(rows, r)
			}
			if code != 0 || len(rows) != 2 || rows[0].Key != "busy" || rows[0].State != "held" || rows[1].State != "released" || rows[0].Holder == nil ||
				rows[0].Liveness != "alive" || rows[1].Liveness != "" || rows[0].Value != "10.0.0.7:8080 v2\t" || rows[1].Value != "" {
				t.Fatalf("--json: exit %d, rows %+v", code, rows)
			}
		})
	}
}

// lineHas reports whether some line of out holds both words.
func lineHas(out, a, b string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, a) && strings.Contains(l, b) {
			return true
		}
	}
	return false
}

func TestLeaseUsage(t *testing.T) {
	for _, args := range [][]string{{"lease"}, {"lease", "run", "--store", "x"}, {"lease", "run", "--key", "k", "--store", "x"},
		{"lease", "ls", "extra"}, {"lease", "ls", "--bogus"}, {"lease", "break", "--store", "x"}, {"lease", "break", "--key", "k", "extra"}} {
		code, _, errOut := runCLI(t, "", args...)
		if code != 2 || strings.Count(errOut, "usage:") != 1 {
			t.Errorf("collab %q: exit %d, stderr %q; want 2 and the usage once", args, code, errOut)
		}
		if len(args) > 1 && args[1] == "run" && !strings.Contains(errOut, "-- COMMAND") {
			t.Errorf("collab %q: the usage %q does not show the command", args, errOut)
		}
	}
	store := filepath.Join(t.TempDir(), "x.db")
	if code, _, errOut := runCLI(t, "", "lease", "run", "--store", store, "--key", "k", "--ttl", "1s", "--heartbeat", "1s", "--", "true"); code != 2 || !strings.Contains(errOut, "Heartbeat") {
		t.Errorf("invalid config: exit %d, stderr %q", code, errOut)
	}
	// A bad key is bad usage, found before the store is opened (or made).
	long := strings.Repeat("k", 300)
	for _, args := range [][]string{{"lease", "run", "--store", store, "--key", long, "--", "true"}, {"lease", "break", "--store", store, "--key", long}} {
		if code, _, errOut := runCLI(t, "", args...); code != 2 || !strings.Contains(errOut, "--key") {
			t.Errorf("collab lease %s with a key of 300 bytes: exit %d, stderr %q; want 2 naming --key", args[1], code, errOut)
		}
	}
	if _, err := os.Stat(store); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused key left the store %s: %v", store, err)
	}
}

// TestLeaseLsListsTheReadableRecordsAndReportsTheCorrupt: one corrupt
// record hides none of the others; it is named on stderr, left as it
// is, and the exit status is 1.
func TestLeaseLsListsTheReadableRecordsAndReportsTheCorrupt(t *testing.T) {
	dir := t.TempDir()
	repo, err := file.Open(platform.OS(), dir)
	if err != nil {
		t.Fatal(err)
	}
	self, _ := platform.OS().Process.Self()
	good := store.Snapshot{Generation: 7, Holder: self, RenewedAt: time.Now(), TTL: time.Hour}
	if _, err := repo.Save(t.Context(), "good", good, 0); err != nil {
		t.Fatal(err)
	}
	// The file repository keeps key "broken" in broken.json.
	broken := filepath.Join(dir, "broken.json")
	garbage := []byte("{not a record\n")
	if err := os.WriteFile(broken, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "lease", "ls", "--store", "dir:"+dir)
	if code != 1 || !lineHas(out, "good", "held") || !strings.Contains(out, "KEY") || strings.Contains(out, "broken") {
		t.Fatalf("exit %d (want 1), stdout %q, stderr %q; want the good record listed", code, out, errOut)
	}
	if !strings.HasPrefix(errOut, "collab lease ls: ") || !strings.Contains(errOut, `"broken"`) || !strings.Contains(errOut, broken) || !strings.Contains(errOut, "corrupt") {
		t.Fatalf("stderr %q; want the corrupt key and its file", errOut)
	}
	code, out, errOut = runCLI(t, "", "lease", "ls", "--store", "dir:"+dir, "--json")
	var row leaseRow
	if err := json.Unmarshal([]byte(out), &row); err != nil || code != 1 || row.Key != "good" || row.Generation != 7 || !strings.Contains(errOut, `"broken"`) {
		t.Fatalf("--json: exit %d, stdout %q (%v), stderr %q", code, out, err, errOut)
	}
	if data, err := os.ReadFile(broken); err != nil || !bytes.Equal(data, garbage) {
		t.Fatalf("the corrupt record was changed: %q, %v", data, err)
	}
}

// TestLeaseLsCreatesNoStore: ls only reads; a store that is not there is
// an error naming it, and stays not there.
func TestLeaseLsCreatesNoStore(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, store string
		code        int
		want        string
	}{
		{"missing sqlite", filepath.Join(dir, "typo.db"), 1, filepath.Join(dir, "typo.db") + ": does not exist"},
		{"missing dir", "dir:" + filepath.Join(dir, "typo"), 1, "dir:" + filepath.Join(dir, "typo") + ": does not exist"},
		{"missing parent", filepath.Join(dir, "no", "leases.db"), 1, "does not exist"},
		{"dir: of a file", "dir:" + file, 1, "is not a directory"},
		{"sqlite of a directory", dir, 1, "is a directory, not a SQLite database"},
		{"empty dir:", "dir:", 2, "--store dir:: names no directory"},
		{"empty", "", 2, "--store: is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "lease", "ls", "--store", tc.store)
			if code != tc.code || out != "" || !strings.HasPrefix(errOut, "collab lease ls: ") || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d (want %d), stdout %q, stderr %q (want %q)", code, tc.code, out, errOut, tc.want)
			}
			if got := dirNames(t, dir); !slices.Equal(got, []string{"file"}) {
				t.Fatalf("ls created %q", got)
			}
		})
	}
}

// TestLeaseRunChecksArgumentsBeforeOpeningTheStore: bad arguments exit 2
// naming the flag, and create no store.
func TestLeaseRunChecksArgumentsBeforeOpeningTheStore(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"long key", []string{"--key", strings.Repeat("k", 300)}, []string{"--key", "300 bytes, more than 256"}},
		{"key with NUL", []string{"--key", "a\x00b"}, []string{"--key", "contains NUL"}},
		{"long value", []string{"--key", "k", "--value", strings.Repeat("v", 1025)}, []string{"--value", "1025 bytes, more than 1024"}},
		{"negative grace", []string{"--key", "k", "--grace", "-5s"}, []string{`"-5s" for flag --grace: negative`}},
		{"heartbeat", []string{"--key", "k", "--ttl", "1s", "--heartbeat", "1s"}, []string{"Heartbeat"}},
		{"grace past a successor's takeover", []string{"--key", "k", "--ttl", "3s", "--heartbeat", "1s", "--grace", "2s"}, []string{"--grace", "at most 1s"}},
		{"all at once", []string{"--key", strings.Repeat("k", 300), "--grace", "-1ms"}, []string{"--key", "--grace"}},
	}
	for kind, store := range stores(t) {
		for _, tc := range tests {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				args := append([]string{"lease", "run", "--store", store}, tc.args...)
				code, out, errOut := runCLI(t, "", append(args, "--", "echo", "ran")...)
				if code != 2 || out != "" || !strings.HasPrefix(errOut, "collab lease run: ") {
					t.Fatalf("exit %d (want 2), stdout %q, stderr %q", code, out, errOut)
				}
				for _, w := range tc.want {
					if !strings.Contains(errOut, w) {
						t.Errorf("stderr %q; want it to name %q", errOut, w)
					}
				}
				if names := dirNames(t, filepath.Dir(strings.TrimPrefix(store, "dir:"))); len(names) != 0 {
					t.Fatalf("the store was created: %q", names)
				}
			})
		}
	}
	for _, store := range []string{"", "dir:"} {
		if code, _, errOut := runCLI(t, "", "lease", "run", "--store", store, "--key", "k", "--", "true"); code != 2 || !strings.Contains(errOut, "--store") {
			t.Errorf("--store %q: exit %d, stderr %q; want 2 naming --store", store, code, errOut)
		}
	}
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestLeaseLsEscapesKeys: a key is written by whoever can write the
// store; an escape sequence in it reaches the operator's terminal quoted,
// never raw.
func TestLeaseLsEscapesKeys(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			const key = "\x1b[2Jred"
			if code, _, errOut := runCLI(t, "", "lease", "run", "--store", store, "--key", key, "--", "true"); code != 0 {
				t.Fatal(errOut)
			}
			code, out, errOut := runCLI(t, "", "lease", "ls", "--store", store)
			if code != 0 || strings.Contains(out, "\x1b") || !lineHas(out, `"\x1b[2Jred"`, "released") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want the key quoted", code, out, errOut)
			}
		})
	}
}

// TestStoreFromTheEnvironment: --store defaults to $COLLAB_STORE, so that
// a PostgreSQL URL with its password need not be on the command line,
// where every local user can read it.
func TestStoreFromTheEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	t.Setenv(command.StoreEnv, path)
	if code, _, errOut := runCLI(t, "", "lease", "run", "--key", "from-env", "--", "true"); code != 0 {
		t.Fatal(errOut)
	}
	code, out, errOut := runCLI(t, "", "lease", "ls")
	if code != 0 || !lineHas(out, "from-env", "released") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = runCLI(t, "", "lease", "ls", "--store", filepath.Join(t.TempDir(), "none.db"))
	if code == 0 {
		t.Fatalf("--store did not override $%s: exit 0, stdout %q", command.StoreEnv, out)
	}
}

// TestLeaseRunBoundedByTheTTL: another user who holds a key's write lock
// in a file store forever makes lease run fail within about a TTL, with
// the cause, instead of hanging it; with --wait too, where the silent
// store is not a holder to wait for.
func TestLeaseRunBoundedByTheTTL(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runCLI(t, "", "lease", "run", "--store", "dir:"+dir, "--key", "k", "--", "true"); code != 0 {
		t.Fatal(errOut)
	}
	u, err := platform.OSFS().TryLock(filepath.Join(dir, ".locks", "k.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Unlock()
	for _, wait := range [][]string{nil, {"--wait"}, {"--wait", "--timeout", "30s"}} {
		done := make(chan struct{})
		var (
			code   int
			errOut string
		)
		go func() {
			defer close(done)
			args := append([]string{"lease", "run", "--store", "dir:" + dir, "--key", "k", "--ttl", "1s", "--heartbeat", "100ms"}, wait...)
			code, _, errOut = runCLI(t, "", append(args, "--", "true")...)
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("lease run %q has not returned a minute after its one-second TTL", wait)
		}
		if code != 1 || !strings.Contains(errOut, "did not answer within the TTL") {
			t.Fatalf("lease run %q: exit %d, stderr %q; want 1 and a failure naming the silent store", wait, code, errOut)
		}
	}
}

// TestLeaseRunWaits: --wait takes the lease once its holder releases it;
// --timeout gives up with 75, saying so.
func TestLeaseRunWaits(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			end := holdLease(t, "--store", store, "--key", "k", "--ttl", "2s", "--heartbeat", "500ms", "--grace", "100ms")
			code, _, errOut := runCLI(t, "", "lease", "run", "--store", store, "--key", "k", "--ttl", "2s", "--heartbeat", "500ms", "--wait", "--timeout", "300ms", "--", "true")
			if code != command.ExitHeld || !strings.Contains(errOut, "timed out waiting for the holder") {
				t.Fatalf("--timeout: exit %d (want %d), stderr %q", code, command.ExitHeld, errOut)
			}
			done := make(chan struct{})
			var (
				out string
				c   int
			)
			go func() {
				defer close(done)
				c, out, errOut = runCLI(t, "", "lease", "run", "--store", store, "--key", "k", "--ttl", "2s", "--heartbeat", "500ms", "--wait", "--", "echo", "ran")
			}()
			if code := end(); code != 0 {
				t.Fatalf("holder exit %d", code)
			}
			<-done
			if c != 0 || out != "ran\n" {
				t.Fatalf("--wait: exit %d, stdout %q, stderr %q", c, out, errOut)
			}
		})
	}
}

// TestLeaseBreakStopsTheHolder: an operator breaks a running holder's
// lease. A live holder on this host is refused without --force; with it,
// the holder's command is stopped with the loss status, `lease ls` shows
// the break, and the next holder's token is above the break's.
func TestLeaseBreakStopsTheHolder(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			stdoutR, done, errb := shortLease(store, "echo ready; exec sleep 60")
			if line, err := bufio.NewReader(stdoutR).ReadString('\n'); err != nil || line != "ready\n" {
				t.Fatalf("command said %q, %v", line, err)
			}
			go io.Copy(io.Discard, stdoutR)
			if code, _, errOut := runCLI(t, "", "lease", "break", "--store", store, "--key", "k"); code != command.ExitHeld || !strings.Contains(errOut, "--force") {
				t.Fatalf("break of a live holder without --force: exit %d, stderr %q; want %d", code, errOut, command.ExitHeld)
			}
			if code, out, errOut := runCLI(t, "", "lease", "break", "--store", store, "--key", "k", "--force"); code != 0 || !strings.Contains(out, "generation 2") {
				t.Fatalf("break --force: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if code := <-done; code != exitLeaseLost || !strings.Contains(errb.String(), "lost") {
				t.Fatalf("the holder: exit %d, stderr %q; want %d", code, errb.String(), exitLeaseLost)
			}
			if _, out, _ := runCLI(t, "", "lease", "ls", "--store", store); !lineHas(out, "broken", "pid "+strconv.Itoa(os.Getpid())) {
				t.Fatalf("lease ls after the break:\n%s", out)
			}
			code, out, errOut := runCLI(t, "", "lease", "run", "--store", store, "--key", "k", "--", "sh", "-c", "echo $COLLAB_LEASE_TOKEN")
			if code != 0 || out != "3\n" {
				t.Fatalf("the next holder: exit %d, stdout %q, stderr %q; want token 3", code, out, errOut)
			}
			if code, _, errOut := runCLI(t, "", "lease", "break", "--store", store, "--key", "k"); code != exitNotHeld || !strings.Contains(errOut, "no lease") {
				t.Fatalf("break of a released lease: exit %d, stderr %q; want %d", code, errOut, exitNotHeld)
			}
		})
	}
}

// TestStoreSchemeTypoIsAUsageError: a store whose scheme collab does not
// know exits 2, naming the schemes, and creates nothing.
func TestStoreSchemeTypoIsAUsageError(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, store := range []string{"sqlite:x.db", "postgress://127.0.0.1/db", "file:leases"} {
		for _, cmd := range [][]string{{"lease", "run", "--store", store, "--key", "k", "--", "true"}, {"lease", "ls", "--store", store}} {
			code, _, errOut := runCLI(t, "", cmd...)
			if code != 2 || !strings.Contains(errOut, "unknown scheme") || !strings.Contains(errOut, "dir:PATH") {
				t.Errorf("%q: exit %d, stderr %q; want 2 naming the schemes", cmd, code, errOut)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a typo'd store made %d files", len(entries))
	}
}

// TestTimeoutWithoutWaitIsAUsageError: --timeout bounds a wait; without
// --wait it is a usage error, for lease run and lock alike.
func TestTimeoutWithoutWaitIsAUsageError(t *testing.T) {
	store := filepath.Join(t.TempDir(), "leases.db")
	for _, cmd := range [][]string{
		{"lease", "run", "--store", store, "--key", "k", "--timeout", "1s", "--", "true"},
		{"lock", "--timeout", "1s", filepath.Join(t.TempDir(), "app.lock"), "--", "true"},
	} {
		code, out, errOut := runCLI(t, "", cmd...)
		if code != 2 || out != "" || !strings.Contains(errOut, "--timeout: bounds the wait of --wait") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", cmd, code, out, errOut)
		}
	}
	if _, err := os.Stat(store); err == nil {
		t.Error("a usage error created the store")
	}
}

// TestLeaseRunSaysItCreatedTheStore: the first run on a store path says
// that it made the store, and the next one does not.
func TestLeaseRunSaysItCreatedTheStore(t *testing.T) {
	store := filepath.Join(t.TempDir(), "leases.db")
	for i, want := range []bool{true, false} {
		code, _, errOut := runCLI(t, "", "lease", "run", "--store", store, "--key", "k", "--", "true")
		if code != 0 || strings.Contains(errOut, "created the store "+store) != want {
			t.Fatalf("run %d: exit %d, stderr %q; want the creation said %v", i, code, errOut, want)
		}
	}
}

// TestLeaseLsJudgesHolders: lease ls says of each holder whether this host
// finds its process dead, alive, or on another process table.
func TestLeaseLsJudgesHolders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	repo, err := sqlite.Open(platformsqlite.OS(), path)
	if err != nil {
		t.Fatal(err)
	}
	self, err := platform.OS().Process.Self()
	if err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil { // reaped: its pid names no process
		t.Fatal(err)
	}
	dead := self
	dead.PID = gone.Process.Pid
	remote := self
	remote.BootID = "00000000-0000-4000-8000-000000000002"
	for key, holder := range map[string]platform.Identity{"alive": self, "dead": dead, "remote": remote} {
		if _, err := repo.Save(t.Context(), key, store.Snapshot{Generation: 1, Holder: holder, RenewedAt: time.Now(), TTL: time.Hour}, 0); err != nil {
			t.Fatal(err)
		}
	}
	repo.Close()
	code, out, errOut := runCLI(t, "", "lease", "ls", "--store", path)
	if code != 0 || !strings.Contains(out, "LIVENESS") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, key := range []string{"alive", "dead", "remote"} {
		if !lineHas(out, key+" ", "  "+key+"  ") {
			t.Errorf("no line of %s judged %s:\n%s", key, key, out)
		}
	}
}

// TestLeaseLsAndBreakChangeNoForeignFile: lease ls and lease break on a
// file that is not a lease store (text, or another program's SQLite
// database) fail, and leave it byte for byte as it was, with nothing
// beside it.
func TestLeaseLsAndBreakChangeNoForeignFile(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.db")
	if err := os.WriteFile(text, []byte("not a database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.db")
	db, err := platformsqlite.Opener().Open(other, platform.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before := map[string][]byte{}
	for _, f := range []string{text, other} {
		if before[f], err = os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	names := dirNames(t, dir)
	for _, f := range []string{text, other} {
		for _, cmd := range [][]string{{"lease", "ls", "--store", f}, {"lease", "break", "--store", f, "--key", "k"}} {
			code, _, errOut := runCLI(t, "", cmd...)
			if code != 1 || !strings.Contains(errOut, f) {
				t.Errorf("%q: exit %d, stderr %q; want 1 naming the file", cmd, code, errOut)
			}
			if after, _ := os.ReadFile(f); !bytes.Equal(after, before[f]) {
				t.Fatalf("%q changed %s", cmd, f)
			}
			if got := dirNames(t, dir); !slices.Equal(got, names) {
				t.Fatalf("%q left %q beside it, want %q", cmd, got, names)
			}
		}
	}
}

// TestUsageErrorsSayWhatIsMissing: a usage error names what is missing
// before the usage, and --help documents the command's environment and
// exit statuses.
func TestUsageErrorsSayWhatIsMissing(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lease", "run", "--store", "x.db", "--", "true"}, "--key is required"},
		{[]string{"lease", "run", "--store", "x.db", "--key", "k"}, "a command to run is required"},
		{[]string{"lease", "break", "--store", "x.db"}, "--key is required"},
		{[]string{"lock", "app.lock"}, "a lock PATH, then --, then the command"},
	} {
		code, _, errOut := runCLI(t, "", tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "usage: ") {
			t.Errorf("%q: exit %d, stderr %q; want 2 saying %q", tc.args, code, errOut, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"lease", "run", "--help"}, []string{"$COLLAB_LEASE_TOKEN", "$COLLAB_LEASE_KEY", "76 the lease was lost"}},
		{[]string{"lease", "break", "--help"}, []string{"3 no lease to break"}},
		{[]string{"lock", "--help"}, []string{"$COLLAB_LOCK_FD", "75 the lock is held"}},
	} {
		_, _, errOut := runCLI(t, "", tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%q does not say %q:\n%s", tc.args, w, errOut)
			}
		}
	}
}

// TestBadDurationSaysHowToWriteOne: a duration without a unit is a usage
// error that shows how durations are written.
func TestBadDurationSaysHowToWriteOne(t *testing.T) {
	code, _, errOut := runCLI(t, "", "lease", "run", "--store", filepath.Join(t.TempDir(), "x.db"), "--key", "k", "--ttl", "5", "--", "true")
	if code != 2 || !strings.Contains(errOut, `"5" is not a duration: write a number and a unit, such as 500ms`) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// TestLeaseRunMakesNoParents: lease run makes a missing store but not
// the directories that would hold it.
func TestLeaseRunMakesNoParents(t *testing.T) {
	dir := t.TempDir()
	for _, store := range []string{"dir:" + filepath.Join(dir, "no", "such", "leases"), filepath.Join(dir, "no", "leases.db")} {
		code, _, errOut := runCLI(t, "", "lease", "run", "--store", store, "--key", "k", "--", "true")
		if code != 1 || !strings.Contains(errOut, "does not exist: create it first") {
			t.Errorf("%s: exit %d, stderr %q", store, code, errOut)
		}
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Fatalf("lease run made %q", got)
	}
}

// TestLeaseRunWaitIsWokenByTheRelease: a `lease run --wait` whose TTL
// makes it poll every minute or so takes the lease as soon as the holder
// releases it, long before its --timeout, on every store on this host:
// the release's tombstone wakes it. The test waits for the waiter's watch
// (its wake file) before it ends the holder, so that the waiter's first
// attempt has met the holder.
func TestLeaseRunWaitIsWokenByTheRelease(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			timing := []string{"--ttl", "10m", "--heartbeat", "1m"}
			end := holdLease(t, append([]string{"--store", store, "--key", "k"}, timing...)...)
			done := make(chan struct{})
			var (
				code         int
				out, errText string
			)
			go func() {
				defer close(done)
				args := append([]string{"lease", "run", "--store", store, "--key", "k", "--wait", "--timeout", "20s"}, timing...)
				code, out, errText = runCLI(t, "", append(args, "--", "echo", "ran")...)
			}()
			wake := wakeFile(store, "k")
			for {
				if _, err := os.Stat(wake); err == nil {
					break
				}
				select {
				case <-done:
					t.Fatalf("the waiter ended before it watched: exit %d, stderr %q", code, errText)
				case <-time.After(5 * time.Millisecond): // polls the file system: nothing tells of a file's creation here
				}
			}
			if c := end(); c != 0 {
				t.Fatalf("holder exit %d", c)
			}
			<-done
			if code != 0 || out != "ran\n" {
				t.Fatalf("the waiter: exit %d, stdout %q, stderr %q", code, out, errText)
			}
		})
	}
}

// wakeFile is the file through which a store of the command wakes the
// waiters of key (a plain key's: no encoding needed).
func wakeFile(store, key string) string {
	if dir, ok := strings.CutPrefix(store, "dir:"); ok {
		return filepath.Join(dir, ".fences", key+".wake")
	}
	return store + ".fences/" + key + ".wake"
}
