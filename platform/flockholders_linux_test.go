package platform

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFlockHolders: the kernel's table names the process that holds a
// flock on a file, not the holders of another file, and nobody once the
// lock is let go.
func TestFlockHolders(t *testing.T) {
	dir := t.TempDir()
	held, other := filepath.Join(dir, "held"), filepath.Join(dir, "other")
	u, err := OSFS().TryLock(held)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Unlock()
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if pids, err := FlockHolders(held); err != nil || !slices.Equal(pids, []int{os.Getpid()}) {
		t.Fatalf("FlockHolders = %v, %v; want this process, %d", pids, err, os.Getpid())
	}
	if pids, err := FlockHolders(other); err != nil || len(pids) != 0 {
		t.Fatalf("FlockHolders of a file nobody locked = %v, %v; want none", pids, err)
	}
	if err := u.Unlock(); err != nil {
		t.Fatal(err)
	}
	if pids, err := FlockHolders(held); err != nil || len(pids) != 0 {
		t.Fatalf("FlockHolders after the unlock = %v, %v; want none", pids, err)
	}
}

// TestParseLocks: holders of the file's flock, or of POSIX locks that
// overlap the range, are found; waiters, other files, other kinds and
// ranges, and lines of another form are not.
func TestParseLocks(t *testing.T) {
	table := `1: FLOCK  ADVISORY  WRITE 101 fd:00:77 0 EOF
1: -> FLOCK  ADVISORY  WRITE 102 fd:00:77 0 EOF
2: FLOCK  ADVISORY  WRITE 103 fd:00:78 0 EOF
3: POSIX  ADVISORY  WRITE 104 fd:00:77 1073741824 1073742335
4: POSIX  ADVISORY  READ  105 fd:00:77 128 128
5: POSIX  ADVISORY  WRITE 106 fd:00:77 1073741826 EOF
garbage line
6: FLOCK  ADVISORY  WRITE notapid fd:00:77 0 EOF
`
	for _, tc := range []struct {
		kind       string
		start, end int64
		want       []int
	}{
		{"FLOCK", 0, -1, []int{101}},
		{"POSIX", 1073741824, 1073742335, []int{104, 106}},
		{"POSIX", 0, 100, nil},
	} {
		got, err := parseLocks(strings.NewReader(table), tc.kind, "fd:00:77", tc.start, tc.end)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s %d-%d: %v, %v; want %v", tc.kind, tc.start, tc.end, got, err, tc.want)
		}
	}
}

// FuzzParseLocks: any table parses without a panic, and every pid found
// is a positive number that its line names.
func FuzzParseLocks(f *testing.F) {
	f.Add("1: FLOCK  ADVISORY  WRITE 101 fd:00:77 0 EOF\n3: POSIX  ADVISORY  WRITE 104 fd:00:77 5 EOF\n")
	f.Add("1: -> FLOCK ADVISORY WRITE 1 fd:00:77 0 EOF")
	f.Fuzz(func(t *testing.T, table string) {
		for _, kind := range []string{"FLOCK", "POSIX"} {
			pids, err := parseLocks(strings.NewReader(table), kind, "fd:00:77", 0, 1<<40)
			if err != nil {
				return // a line too long for the scanner
			}
			for _, pid := range pids {
				if pid <= 0 || !strings.Contains(table, strconv.Itoa(pid)) {
					t.Fatalf("pid %d from %q", pid, table)
				}
			}
		}
	})
}

// hex2 is fmt's %02x: /proc/locks writes device numbers so.
func TestHex2(t *testing.T) {
	for _, v := range []uint32{0, 1, 0xf, 0x10, 0xfd, 0x103, 0xffffffff} {
		if got, want := hex2(v), fmt.Sprintf("%02x", v); got != want {
			t.Errorf("hex2(%#x) = %q, want %q", v, got, want)
		}
	}
}
