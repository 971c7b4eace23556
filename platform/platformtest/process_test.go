package platformtest_test

import (
	"errors"
	"testing"

	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
)

func TestProcessesJudgements(t *testing.T) {
	type step struct {
		name string
		act  func(p *platformtest.Processes, id platform.Identity) platform.Identity
		want platform.Liveness
	}
	same := func(_ *platformtest.Processes, id platform.Identity) platform.Identity { return id }
	steps := []step{
		{"started", same, platform.Alive},
		{"killed, not reaped", func(p *platformtest.Processes, id platform.Identity) platform.Identity { p.Kill(id.PID); return id }, platform.Dead},
		{"reaped", func(p *platformtest.Processes, id platform.Identity) platform.Identity { p.Reap(id.PID); return id }, platform.Dead},
		{"pid reused", func(p *platformtest.Processes, id platform.Identity) platform.Identity { p.Reuse(id.PID); return id }, platform.Dead},
		{"reuser itself", func(p *platformtest.Processes, id platform.Identity) platform.Identity { return p.Identity(id.PID) }, platform.Alive},
		{"host renamed", func(p *platformtest.Processes, id platform.Identity) platform.Identity {
			p.SetHost("renamed")
			return id
		}, platform.Alive},
		{"hidden, EPERM", func(p *platformtest.Processes, id platform.Identity) platform.Identity {
			p.Hide(id.PID, true)
			return id
		}, platform.Alive},
		{"hidden, no answer", func(p *platformtest.Processes, id platform.Identity) platform.Identity {
			p.Hide(id.PID, false)
			return id
		}, platform.Unknown},
		{"rebooted", func(p *platformtest.Processes, id platform.Identity) platform.Identity { p.Reboot(); return id }, platform.Remote},
	}
	p := platformtest.NewProcesses()
	id := p.Start()
	for _, s := range steps {
		id = s.act(p, id)
		if got := p.Judge(id); got.Liveness != s.want {
			t.Errorf("%s: Judge(%v) = %v (%s), want %v", s.name, id, got.Liveness, got.Reason, s.want)
		}
	}
}

func TestProcessesSelf(t *testing.T) {
	p := platformtest.NewProcesses()
	self, err := p.Self()
	if err != nil {
		t.Fatal(err)
	}
	if err := self.Validate(); err != nil {
		t.Fatalf("Self() = %v: %v", self, err)
	}
	if got := p.Judge(self); got.Liveness != platform.Alive {
		t.Errorf("Judge(Self()) = %v", got)
	}
	boom := errors.New("sysctl denied")
	p.FailSelf(boom)
	if _, err := p.Self(); !errors.Is(err, boom) {
		t.Fatalf("Self() after FailSelf = %v, want it to wrap %v", err, boom)
	}
	var selfErr *platform.SelfError
	if _, err := p.Self(); !errors.As(err, &selfErr) {
		t.Fatalf("Self() error %T is not a *platform.SelfError", err)
	}
	other := p.Start()
	if got, _ := p.As(other).Self(); got != other {
		t.Errorf("As(other).Self() = %v, want %v", got, other)
	}
}

func TestFakePlatform(t *testing.T) {
	f := platformtest.New(t)
	if f.Platform.SQLite == nil || f.Platform.GetClock() != platform.Clock(f.Clock) {
		t.Fatal("New did not wire SQLite and the fake clock")
	}
	if g := platformtest.New(t, platformtest.WithoutSQLite()); g.Platform.SQLite != nil {
		t.Fatal("WithoutSQLite left SQLite in place")
	}
	name := f.Dir + "/stamp"
	boom := errors.New("disk full")
	f.FS.SetFault(func(op platformtest.Op, _ string) error {
		if op == platformtest.OpCreateExclusive {
			return boom
		}
		return nil
	})
	if err := f.Platform.FS.CreateExclusive(name, []byte("x"), 0o600); !errors.Is(err, boom) {
		t.Fatalf("CreateExclusive with a fault = %v, want %v", err, boom)
	}
	f.FS.SetFault(nil)
	if err := f.Platform.FS.CreateExclusive(name, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := f.Platform.FS.ReadFile(name, 64); err != nil || string(b) != "x" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	other := f.Processes.Start()
	if got, _ := f.As(other).Process.Self(); got != other {
		t.Errorf("As(other) plays %v, want %v", got, other)
	}
}
