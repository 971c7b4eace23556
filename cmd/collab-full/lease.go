package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rivus/collab/internal/command"
	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/file"
	"github.com/rivus/collab/lease/sqlite"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// exitLeaseLost is the status of `collab lease run` when the lease was lost
// while the command ran (the command was then stopped): EX_PROTOCOL.
const exitLeaseLost = 76

// leaseStore is an open repository and how to close it.
type leaseStore struct {
	repo  store.Repository
	close func() error
}

// storeSpec is a parsed STORE: "dir:PATH" for the file repository, a
// postgres:// or postgresql:// URL for PostgreSQL, anything else a SQLite
// database path.
type storeSpec struct {
	spec string // as given to --store
	kind string // "sqlite", "dir" or "postgres"
	path string // the database file or directory; the URL for postgres
}

// storeError reports a --store that names no usable store. Nothing was
// created or changed.
type storeError struct {
	Spec   string // as given to --store
	Reason string
	Err    error // the cause, if any: fs.ErrNotExist for a missing store
}

func (e *storeError) Error() string {
	if e.Spec == "" {
		return "--store: " + e.Reason
	}
	return fmt.Sprintf("--store %s: %s", e.Spec, e.Reason)
}

func (e *storeError) Unwrap() error { return e.Err }

// parseStore checks the form of STORE, without touching it.
func parseStore(spec string) (storeSpec, error) {
	switch dir, isDir := strings.CutPrefix(spec, "dir:"); {
	case isPostgresURL(spec):
		return storeSpec{spec, "postgres", spec}, nil
	case spec == "":
		return storeSpec{}, &storeError{Reason: "is required: a SQLite file path, dir:PATH, or a postgres:// URL"}
	case isDir && dir == "":
		return storeSpec{}, &storeError{Spec: spec, Reason: "names no directory; want dir:PATH"}
	case isDir:
		return storeSpec{spec, "dir", dir}, nil
	case unknownScheme(spec) != "":
		// A typo of dir: or postgres:// would make a new SQLite file of
		// that name, and two jobs that think they share a lease would not.
		return storeSpec{}, &storeError{Spec: spec, Reason: fmt.Sprintf("unknown scheme %q: a store is a SQLite file path, dir:PATH, or a postgres:// URL (for a SQLite file whose name has a colon, write ./%s)", unknownScheme(spec), spec)}
	}
	return storeSpec{spec, "sqlite", spec}, nil
}

// unknownScheme returns the scheme spec begins with ("sqlite" of
// sqlite:x.db), or "": a word of two or more letters, digits, '+', '-'
// or '.' before a colon, as URLs write it. A one-letter one is a Windows
// drive.
func unknownScheme(spec string) string {
	scheme, _, ok := strings.Cut(spec, ":")
	if !ok || len(scheme) < 2 || !isLetter(scheme[0]) {
		return ""
	}
	for i := range len(scheme) {
		if c := scheme[i]; !isLetter(c) && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return ""
		}
	}
	return scheme
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// mustExist returns a *storeError unless s is a store that exists: a
// SQLite file or a directory, as s says. A PostgreSQL store is not
// checked here.
func (s storeSpec) mustExist(p *platform.Platform) error {
	if s.kind == "postgres" || p == nil || p.FS == nil {
		return nil // opening reports a platform without a file system
	}
	info, err := p.FS.Stat(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &storeError{Spec: s.spec, Reason: "does not exist (lease ls creates no store)", Err: err}
	case err != nil:
		return &storeError{Spec: s.spec, Reason: err.Error(), Err: err}
	case s.kind == "dir" && !info.IsDir():
		return &storeError{Spec: s.spec, Reason: "is not a directory"}
	case s.kind == "sqlite" && info.IsDir():
		return &storeError{Spec: s.spec, Reason: "is a directory, not a SQLite database (for a file store: dir:" + s.path + ")"}
	}
	return nil
}

// parentExists returns a *storeError unless the directory that would
// hold s exists: lease run makes a store, never the path to it, so that a
// mistyped path fails instead of growing a tree (dir:/nonexistent/dir).
func (s storeSpec) parentExists(p *platform.Platform) error {
	if s.kind == "postgres" || p == nil || p.FS == nil {
		return nil
	}
	parent := filepath.Dir(filepath.Clean(s.path))
	info, err := p.FS.Stat(parent)
	if err == nil && !info.IsDir() {
		err = &fs.PathError{Op: "stat", Path: parent, Err: errors.New("not a directory")}
	}
	if err != nil {
		return &storeError{Spec: s.spec, Reason: fmt.Sprintf("the directory that would hold it does not exist: create it first (lease run makes the store, not the path to it): %v", err), Err: err}
	}
	return nil
}

// openStore opens s, creating it if missing; readOnly opens an existing
// store only, and creates, migrates or changes nothing.
func openStore(p *platform.Platform, s storeSpec, readOnly bool) (leaseStore, error) {
	switch {
	case s.kind == "postgres":
		return openPostgresStore(s.path, readOnly)
	case s.kind == "dir" && readOnly:
		r, err := file.OpenReadOnly(p, s.path)
		return leaseStore{r, func() error { return nil }}, err
	case s.kind == "dir":
		r, err := file.Open(p, s.path)
		return leaseStore{r, func() error { return nil }}, err
	}
	open := sqlite.Open
	if readOnly {
		open = sqlite.OpenReadOnly
	}
	r, err := open(p, s.path)
	if err != nil {
		return leaseStore{}, err
	}
	return leaseStore{r, r.Close}, nil
}

func runLease(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "run":
			return runLeaseRun(args[1:], stdin, stdout, stderr)
		case "ls":
			return runLeaseLs(args[1:], stdout, stderr)
		case "break":
			return runLeaseBreak(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintln(stderr, "usage: "+leaseRunUsage+"\n       "+leaseLsUsage+"\n       "+leaseBreakUsage)
	return 2
}

// The usage lines of collab lease.
const (
	leaseRunUsage   = "collab lease run --store STORE --key KEY [--ttl D] [--heartbeat D] [--grace D] [--wait] [--timeout D] [--value V] -- COMMAND [ARG...]"
	leaseLsUsage    = "collab lease ls --store STORE [--json]"
	leaseBreakUsage = "collab lease break --store STORE --key KEY [--force]"
)

// newFlags returns a flag set for the subcommand name whose usage prints
// the usage line, then the flags.
func newFlags(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: "+usage)
		if notes := usageNotes[name]; notes != "" {
			fmt.Fprintln(stderr, notes)
		}
		fs.PrintDefaults()
	}
	return fs
}

// usageNotes say, after a subcommand's usage line, what the command's
// environment holds and what its exit statuses mean.
var usageNotes = map[string]string{
	"collab lease run": "The command runs with $COLLAB_LEASE_KEY (the key) and $COLLAB_LEASE_TOKEN (the fencing token,\n" +
		"the lease's generation: pass it to every write that can check it). Exit status: the command's;\n" +
		"75 the key is held (or the wait timed out); 76 the lease was lost and the command stopped;\n" +
		"1 the store failed; 2 bad usage. The store may also come from $" + command.StoreEnv + ".",
	"collab lease ls": "Opens the store read-only: it creates and changes nothing. Exit status: 0; 1 the store is\n" +
		"missing, is not a lease store, or failed; 2 bad usage.",
	"collab lease break": "Exit status: 0 broken; 3 no lease to break (no record, or released); 75 the holder may still\n" +
		"run on this host (--force breaks it anyway); 1 the store is missing or failed; 2 bad usage.",
}

// exitNotHeld is lease break's status for a key with no lease to break.
const exitNotHeld = 3

// missing reports a required argument that is absent, with the usage.
func missing(fs *flag.FlagSet, stderr io.Writer, what string) int {
	fmt.Fprintf(stderr, "%s: %s\n", fs.Name(), what)
	fs.Usage()
	return 2
}

func runLeaseRun(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("collab lease run", leaseRunUsage, stderr)
	storeSpec := fs.String("store", os.Getenv(command.StoreEnv), "a SQLite file path, dir:PATH for one JSON file per key, or a postgres:// URL (default $"+command.StoreEnv+")")
	key := fs.String("key", "", "the key to lease")
	ttl := command.DurationFlag(fs, "ttl", time.Minute, "the lease's time to live")
	heartbeat := command.DurationFlag(fs, "heartbeat", 15*time.Second, "how often to renew (at most ttl/2)")
	wait := fs.Bool("wait", false, "wait for the holder instead of exiting 75 at once: woken by a release or a break where the store can tell, and trying again every tenth of --ttl, which takes over a dead holder, and a silent one once the longer of its TTL and --ttl has passed since first seen")
	timeout := command.DurationFlag(fs, "timeout", 0, "with --wait, give up after this long and exit 75 (0: wait for ever)")
	value := fs.String("value", "", "a value to publish with the lease, which lease ls shows (an address, a version)")
	grace := command.DurationFlag(fs, "grace", 10*time.Second, "time between SIGTERM and SIGKILL of the command on loss; the lease is declared lost this long before its TTL, so that the command has stopped before a successor may take over (default 10s, or less to leave two heartbeats in the TTL)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// The flag package consumes the "--" that ends the flags.
	argv := fs.Args()
	if len(argv) > 0 && argv[0] == "--" {
		argv = argv[1:]
	}
	switch {
	case *key == "":
		return missing(fs, stderr, "--key is required")
	case len(argv) == 0:
		return missing(fs, stderr, "a command to run is required, after --")
	}
	// Validate every argument before the store is opened (or created).
	spec, specErr := parseStore(*storeSpec)
	var keyErr, valueErr error
	if err := store.ValidateKey(*key); err != nil {
		keyErr = fmt.Errorf("--key: %w", err)
	}
	if err := store.ValidateValue(*value); err != nil {
		valueErr = fmt.Errorf("--%w", err)
	}
	graceErr := leaseGrace(grace, command.FlagSet(fs, "grace"), *ttl, *heartbeat)
	cfg := lease.Config{TTL: *ttl, Heartbeat: *heartbeat, LossMargin: *grace, Repository: lease.NewMemoryRepository(), Platform: command.Host()}
	cfgErr := error(nil)
	if graceErr == nil {
		cfgErr = cfg.Validate()
	}
	var timeoutErr error
	if command.FlagSet(fs, "timeout") && !*wait {
		timeoutErr = errors.New("--timeout: bounds the wait of --wait, which is not given")
	} else {
		timeoutErr = command.NonNegative("timeout", *timeout, "wait for ever")
	}
	if command.ReportAll(stderr, "collab lease run", specErr, keyErr, valueErr, graceErr, timeoutErr, cfgErr) {
		return 2
	}
	existed := spec.mustExist(command.Host()) == nil
	if err := spec.parentExists(command.Host()); !existed && err != nil {
		fmt.Fprintf(stderr, "collab lease run: %v\n", err)
		return 1
	}
	st, err := openStore(command.Host(), spec, false)
	if err != nil {
		fmt.Fprintf(stderr, "collab lease run: %v\n", err)
		return 1
	}
	defer st.close()
	if !existed {
		// Said, so that a misspelt --store shows before a job that
		// thinks it shares the lease does not.
		fmt.Fprintf(stderr, "collab lease run: created the store %s\n", spec.path)
	}
	cfg.Repository = st.repo
	m, err := lease.NewManager(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "collab lease run: %v\n", err)
		return 1
	}
	defer m.Close()
	l, code := acquireLease(m, st.repo, *key, *value, *wait, *timeout, *ttl, stderr)
	if l == nil {
		return code
	}
	defer l.Close()
	env := []string{"COLLAB_LEASE_KEY=" + *key, "COLLAB_LEASE_TOKEN=" + strconv.FormatUint(uint64(l.Token()), 10)}
	status, lost := command.Supervise(command.Child{Argv: argv, Env: env, Stdin: stdin, Stdout: stdout, Stderr: stderr, Lost: l.Lost(), Grace: *grace})
	if lost && errors.Is(l.Err(), lease.ErrLost) {
		fmt.Fprintf(stderr, "collab lease run: %v; the command was stopped\n", l.Err())
		return exitLeaseLost
	}
	return status
}

// leaseGrace checks --grace, which must leave two heartbeats in the TTL
// so that the command has stopped before a successor may take over, or,
// when it was not given, lowers its default to fit.
func leaseGrace(grace *time.Duration, given bool, ttl, heartbeat time.Duration) error {
	room := ttl - 2*heartbeat
	if !given {
		*grace = min(*grace, max(room, 0))
		return nil
	}
	if err := command.NonNegative("grace", *grace, "SIGKILL at once"); err != nil {
		return err
	}
	if *grace > room {
		return fmt.Errorf("--grace: is %v; the command must stop before a successor may take over, so it must leave two heartbeats in the TTL: at most %v", *grace, max(room, 0))
	}
	return nil
}

// acquireLease acquires key, publishing value; with wait it waits for the holder, until
// timeout if positive, or an interrupt. It returns the lease, or nil and
// the exit status. Each attempt is bounded by the TTL: a store that does
// not answer in that time (a server down, a per-key lock another user
// holds) fails the command, with --wait too, instead of hanging it or
// passing for a holder to wait for.
func acquireLease(m *lease.Manager, repo store.Repository, key, value string, wait bool, timeout, ttl time.Duration, stderr io.Writer) (*lease.Lease, int) {
	ctx, stop := signal.NotifyContext(context.Background(), command.ForwardedSignals...)
	defer stop()
	var (
		l   *lease.Lease
		err error
	)
	attempt := func(ctx context.Context) (*lease.Lease, error) {
		ctx, cancel := context.WithTimeoutCause(ctx, ttl, errStoreSilent)
		defer cancel()
		return m.Acquire(ctx, key, lease.WithValue(value))
	}
	if wait {
		wctx, cancel := ctx, context.CancelFunc(func() {})
		if timeout > 0 {
			wctx, cancel = context.WithTimeoutCause(ctx, timeout, errWaitTimedOut)
		}
		// As lease.Manager.AcquireWait waits: woken by a release where
		// the store can tell (store.Watcher), and polling between a
		// twentieth and a tenth of the TTL, but with each attempt bounded.
		freed, stop := store.WatchFreedOrPoll(wctx, repo, key)
		pause := platform.Backoff{Clock: command.Host().GetClock(), First: max(ttl/10, 2*time.Millisecond), Jitter: true}
		for l, err = attempt(wctx); errors.Is(err, lease.ErrHeld); l, err = attempt(wctx) {
			if err = pause.WaitOr(wctx, freed); err != nil {
				break
			}
		}
		stop()
		cancel()
	} else {
		l, err = attempt(ctx)
	}
	var held *lease.HeldError
	switch {
	case err == nil:
		return l, 0
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "collab lease run: interrupted while waiting")
		return nil, 130
	case errors.Is(err, errWaitTimedOut):
		fmt.Fprintf(stderr, "collab lease run: %q: timed out waiting for the holder\n", key)
		return nil, command.ExitHeld
	case errors.As(err, &held) && held.Holder != nil:
		fmt.Fprintf(stderr, "collab lease run: %q is held by pid %d on %s\n", key, held.Holder.PID, platform.Printable(held.Holder.Host))
		return nil, command.ExitHeld
	case errors.Is(err, lease.ErrHeld):
		fmt.Fprintf(stderr, "collab lease run: %q is held (holder unknown)\n", key)
		return nil, command.ExitHeld
	}
	fmt.Fprintf(stderr, "collab lease run: %v\n", err)
	return nil, 1
}

// errWaitTimedOut ends a wait that --timeout bounds.
var errWaitTimedOut = errors.New("timed out waiting for the holder")

// errStoreSilent ends an acquisition the store did not answer within a TTL.
var errStoreSilent = errors.New("the store did not answer within the TTL")

// leaseRow is one line of `collab lease ls`.
type leaseRow struct {
	Key        string             `json:"key"`
	Generation lease.Token        `json:"generation"`
	State      string             `json:"state"` // held, released, broken, expired
	Holder     *platform.Identity `json:"holder"`
	Age        string             `json:"age"` // since the last renewal, by the holder's wall clock
	// Liveness is the holder's process as this host judges it: alive,
	// dead, unknown, or remote (another process table, judged by the
	// TTL alone); "" for a released or broken record.
	Liveness string `json:"liveness,omitempty"`
	// Value is what the holder publishes with its lease, "" for none.
	Value string `json:"value,omitempty"`
}

func runLeaseLs(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("collab lease ls", leaseLsUsage, stderr)
	storeSpec := fs.String("store", os.Getenv(command.StoreEnv), "a SQLite file path, dir:PATH, or a postgres:// URL (default $"+command.StoreEnv+")")
	asJSON := fs.Bool("json", false, "print JSON lines")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return 2
	}
	p := command.Host()
	st, code := openExistingStore(p, *storeSpec, "collab lease ls", false, stderr)
	if code != 0 {
		return code
	}
	defer st.close()
	rows, bad, err := listLeases(context.Background(), st.repo, p.GetClock().Now(), p.Process)
	if err != nil {
		fmt.Fprintf(stderr, "collab lease ls: %v\n", err)
		return 1
	}
	ok := printLeases(stdout, rows, *asJSON)
	// The records that could not be read, after those that could.
	if command.ReportAll(stderr, "collab lease ls", bad...) {
		return 1
	}
	return boolStatus(ok)
}

// openExistingStore opens the store that spec names, for a command that
// reads or fixes records (ls, break): a mistyped path must not create a
// store. On failure it reports to stderr under name and returns the exit
// status: 2 for a bad spec, 1 for a store that is missing or fails.
func openExistingStore(p *platform.Platform, spec, name string, write bool, stderr io.Writer) (leaseStore, int) {
	s, err := parseStore(spec)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return leaseStore{}, 2
	}
	if err := s.mustExist(p); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return leaseStore{}, 1
	}
	// Read-only first, so that a file that is not a lease store is left
	// as it was; a command that writes opens it again for that.
	st, err := openStore(p, s, true)
	if err == nil && write {
		if err = st.close(); err == nil {
			st, err = openStore(p, s, false)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return leaseStore{}, 1
	}
	return st, 0
}

// printLeases prints rows as a table, or as JSON lines, and reports
// whether the writes succeeded.
func printLeases(stdout io.Writer, rows []leaseRow, asJSON bool) bool {
	if asJSON {
		enc := json.NewEncoder(stdout)
		for _, r := range rows {
			if enc.Encode(r) != nil {
				return false
			}
		}
		return true
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tGENERATION\tSTATE\tHOLDER\tLIVENESS\tAGE\tVALUE")
	for _, r := range rows {
		holder, liveness, value := "-", r.Liveness, "-"
		if r.Holder != nil {
			holder = fmt.Sprintf("pid %d on %s", r.Holder.PID, platform.Printable(r.Holder.Host))
		}
		if liveness == "" {
			liveness = "-"
		}
		if r.Value != "" {
			value = platform.Printable(r.Value)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", platform.Printable(r.Key), r.Generation, r.State, holder, liveness, r.Age, value)
	}
	return tw.Flush() == nil
}

// listLeases reads every record of a repository that can list its keys.
// A record that cannot be read is returned in bad, one error naming its
// key, and the others are still listed; err is a failure to list at all.
func listLeases(ctx context.Context, repo store.Repository, now time.Time, judge platform.Process) (rows []leaseRow, bad []error, err error) {
	lister, ok := repo.(store.Lister)
	if !ok {
		return nil, nil, errors.New("this store cannot list its keys")
	}
	keys, err := lister.Keys(ctx)
	if err != nil {
		return nil, nil, err
	}
	rows = make([]leaseRow, 0, len(keys))
	for _, k := range keys {
		rec, ok, err := repo.Load(ctx, k)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		if ok {
			r := rowOf(k, rec.Snapshot, now)
			if !rec.Snapshot.Released && judge != nil {
				r.Liveness = judge.Judge(rec.Snapshot.Holder).Liveness.String()
			}
			rows = append(rows, r)
		}
	}
	return rows, bad, nil
}

func rowOf(key string, s store.Snapshot, now time.Time) leaseRow {
	age := now.Sub(s.RenewedAt)
	r := leaseRow{Key: key, Generation: s.Generation, State: "held", Age: age.Round(time.Second).String(), Value: s.Value}
	holder := s.Holder
	r.Holder = &holder
	switch {
	case s.Broken:
		r.State = "broken"
	case s.Released:
		r.State = "released"
	case age > s.TTL:
		r.State = "expired"
	}
	return r
}

func boolStatus(ok bool) int {
	if ok {
		return 0
	}
	return 1
}
