package platform

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rivus/collab/internal/childproc"
	"golang.org/x/sys/unix"
)

// identity reads the identity the child printed in helperIdentity mode.
func childIdentity(t *testing.T, c *childproc.Child) Identity {
	t.Helper()
	id, err := ParseIdentity([]byte(c.Line(t)))
	if err != nil {
		t.Fatalf("child identity: %v", err)
	}
	if id.PID != c.Pid() {
		t.Fatalf("child says pid %d, exec started pid %d", id.PID, c.Pid())
	}
	return id
}

// statStartTime reads field 22 of /proc/<pid>/stat without ParseProcStat,
// so that the tests check the package against its own reading of proc(5).
func statStartTime(t *testing.T, pid string) (state string, start uint64) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndex(s, ")")+1:]) // fields 3, 4, ...
	start, err = strconv.ParseUint(fields[22-3], 10, 64)
	if err != nil {
		t.Fatalf("/proc/%s/stat field 22: %v", pid, err)
	}
	return fields[0], start
}

func TestSelfMatchesProc(t *testing.T) {
	id, err := OSProcess().Self()
	if err != nil {
		t.Fatal(err)
	}
	_, start := statStartTime(t, "self")
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	var ns syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/pid", &ns); err != nil {
		t.Fatal(err)
	}
	link, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	want := Identity{
		Host:         host,
		BootID:       strings.TrimSpace(string(boot)),
		PID:          os.Getpid(),
		StartTime:    start,
		PIDNamespace: ns.Ino,
	}
	if id != want {
		t.Fatalf("Self() = %+v, /proc says %+v", id, want)
	}
	if wantLink := fmt.Sprintf("pid:[%d]", ns.Ino); link != wantLink {
		t.Errorf("/proc/self/ns/pid links to %q, its inode is %d", link, ns.Ino)
	}
	if again, err := OSProcess().Self(); err != nil || again != id {
		t.Errorf("second Self() = %+v, %v; want %+v", again, err, id)
	}
}

func TestJudgeOwnProcess(t *testing.T) {
	self := mustSelf(t)
	otherBoot, otherNS, otherStart := self, self, self
	otherBoot.BootID = "00000000-0000-0000-0000-000000000000"
	otherNS.PIDNamespace++
	otherStart.StartTime++
	renamed := self
	renamed.Host = "renamed-" + self.Host
	tests := []struct {
		name   string
		holder Identity
		want   Liveness
	}{
		{"itself", self, Alive},
		{"renamed host", renamed, Alive},
		{"another start time", otherStart, Dead},
		{"another boot", otherBoot, Remote},
		{"another pid namespace", otherNS, Remote},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if v := OSProcess().Judge(tt.holder); v.Liveness != tt.want {
				t.Errorf("Judge(%v) = %v (%s), want %v", tt.holder, v.Liveness, v.Reason, tt.want)
			}
		})
	}
}

func TestJudgeChildLifecycle(t *testing.T) {
	c := startChild(t, helperIdentity)
	id := childIdentity(t, c)
	_, start := statStartTime(t, strconv.Itoa(id.PID))
	if id.StartTime != start {
		t.Fatalf("child says start time %d, /proc/%d/stat says %d", id.StartTime, id.PID, start)
	}
	if !id.SameProcessTable(mustSelf(t)) {
		t.Fatalf("child %v and parent do not share a process table", id)
	}
	judge(t, "running child", id, Alive, "holder's start time")
	reused := id
	reused.StartTime--
	judge(t, "running child, other start time", reused, Dead, "another process")

	if err := unix.Kill(id.PID, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitExitedUnreaped(t, id.PID)
	if state, _ := statStartTime(t, strconv.Itoa(id.PID)); state != "Z" {
		t.Fatalf("killed, unreaped child is in state %q, want Z", state)
	}
	judge(t, "zombie", id, Dead, "zombie")

	if err := c.Wait(); err == nil {
		t.Fatal("killed child exited cleanly")
	}
	// The pid may in principle be reused at once, which is Dead too.
	judge(t, "reaped child", id, Dead, "")
}

func TestJudgeChildExitsNormally(t *testing.T) {
	c := startChild(t, helperIdentity)
	id := childIdentity(t, c)
	judge(t, "running child", id, Alive, "")
	finish(t, c)
	judge(t, "exited child", id, Dead, "")
}

// waitExitedUnreaped blocks until pid has exited, without reaping it.
func waitExitedUnreaped(t *testing.T, pid int) {
	t.Helper()
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			return
		}
		if !errors.Is(err, unix.EINTR) {
			t.Fatalf("waitid(%d, WEXITED|WNOWAIT): %v", pid, err)
		}
	}
}

func judge(t *testing.T, what string, holder Identity, want Liveness, reason string) {
	t.Helper()
	v := OSProcess().Judge(holder)
	if v.Liveness != want || !strings.Contains(v.Reason, reason) {
		t.Fatalf("%s: Judge(%v) = %v (%s), want %v with reason containing %q", what, holder, v.Liveness, v.Reason, want, reason)
	}
}

func mustSelf(t *testing.T) Identity {
	t.Helper()
	id, err := OSProcess().Self()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestSignalProbeDenied checks that the kernel's EPERM is judged alive:
// directly when not root, and in a child that gives up root otherwise.
func TestSignalProbeDenied(t *testing.T) {
	if os.Geteuid() != 0 {
		if owner := procOwner(t, "1"); owner == uint32(os.Geteuid()) {
			t.Skipf("pid 1 belongs to this user (uid %d): no EPERM to observe", owner)
		}
		report, err := deniedProbeReport()
		if err != nil {
			t.Fatal(err)
		}
		if report != wantDeniedReport {
			t.Fatalf("pid 1 as uid %d: %s, want %s", os.Geteuid(), report, wantDeniedReport)
		}
		return
	}
	c := startChild(t, helperDeniedProbe)
	if got := c.Line(t); got != wantDeniedReport {
		t.Fatalf("pid 1 from an unprivileged child: %s, want %s", got, wantDeniedReport)
	}
	finish(t, c)
}

const wantDeniedReport = "gone=false denied=true seen=false, judged alive"

// procOwner returns the uid that owns /proc/<pid>.
func procOwner(t *testing.T, pid string) uint32 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/"+pid, &st); err != nil {
		t.Fatal(err)
	}
	return st.Uid
}

// unprivileged is the uid and gid a root child drops to: nobody.
const unprivileged = 65534

// deniedProbeReport signals pid 1 (another user's process) as an
// unprivileged user and reports the probe and the judgement built on it.
func deniedProbeReport() (string, error) {
	if os.Geteuid() == 0 {
		// Go applies setuid to every thread of the process.
		if err := syscall.Setgid(unprivileged); err != nil {
			return "", err
		}
		if err := syscall.Setuid(unprivileged); err != nil {
			return "", err
		}
	}
	table, err := readTable()
	if err != nil {
		return "", err
	}
	probe := signalProbe(1)
	holder := table
	holder.PID, holder.StartTime = 1, 1
	v := Judge(table, holder, signalProbe)
	return fmt.Sprintf("gone=%t denied=%t seen=%t, judged %v", probe.Gone, probe.Denied, probe.Seen, v.Liveness), nil
}

// TestSignalProbeExisting: a null signal that succeeds proves nothing
// about the start time, so on its own it judges Unknown.
func TestSignalProbeExisting(t *testing.T) {
	self := mustSelf(t)
	if p := signalProbe(self.PID); p != (PIDProbe{}) {
		t.Fatalf("signalProbe(own pid) = %+v, want no finding", p)
	}
	if v := Judge(self, self, signalProbe); v.Liveness != Unknown {
		t.Fatalf("Judge(self) by signal alone = %v (%s), want unknown", v.Liveness, v.Reason)
	}
}

func TestProbePID(t *testing.T) {
	self := mustSelf(t)
	if p := probePID(self.PID); p != (PIDProbe{Seen: true, StartTime: self.StartTime}) {
		t.Errorf("probePID(own pid) = %+v, want seen with start time %d", p, self.StartTime)
	}
}

// TestJudgeOutOfRangePID: kill(2) takes a 32-bit pid_t, so a larger pid
// from a stored identity must not reach it truncated (pid 1<<32+n would
// signal pid n), and a pid that no process can have is proof of death.
// Non-positive pids address process groups in kill(2) and prove nothing.
func TestJudgeOutOfRangePID(t *testing.T) {
	if strconv.IntSize == 32 {
		t.Skip("int cannot hold a pid beyond pid_t")
	}
	self := mustSelf(t)
	tests := []struct {
		name string
		pid  int
		want Liveness
	}{
		{"2^32 + own pid", 1<<32 + self.PID, Dead},
		{"2^32 + 1", 1<<32 + 1, Dead},
		{"2^31", math.MaxInt32 + 1, Dead},
		{"max int", math.MaxInt, Dead},
		{"zero", 0, Unknown},
		{"-1", -1, Unknown},
		{"-99999", -99999, Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			holder := self
			holder.PID = tt.pid
			if v := OSProcess().Judge(holder); v.Liveness != tt.want {
				t.Errorf("Judge(pid %d) = %v (%s), want %v", tt.pid, v.Liveness, v.Reason, tt.want)
			}
		})
	}
}

// TestParseProcStatLiveProcesses parses the stat line of every process and
// thread visible now; processes that end meanwhile are skipped.
func TestParseProcStatLiveProcesses(t *testing.T) {
	paths, err := filepath.Glob("/proc/[0-9]*/task/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	parsed := 0
	for _, path := range paths {
		line, err := os.ReadFile(path)
		if err != nil {
			continue // the thread ended
		}
		st, err := ParseProcStat(line)
		if err != nil {
			t.Errorf("%s: %v\n%q", path, err, line)
			continue
		}
		if want := filepath.Base(filepath.Dir(path)); strconv.Itoa(st.PID) != want {
			t.Errorf("%s: pid %d", path, st.PID)
		}
		parsed++
	}
	if parsed == 0 {
		t.Fatal("no stat line parsed")
	}
}
