package platform

import (
	"strings"
	"testing"
)

func TestJudgeTable(t *testing.T) {
	table := Identity{Host: "h", BootID: "boot-a", PID: 7, StartTime: 70, PIDNamespace: 4026531836}
	holder := Identity{Host: "h", BootID: "boot-a", PID: 42, StartTime: 420, PIDNamespace: 4026531836}
	with := func(f func(*Identity)) Identity { id := holder; f(&id); return id }
	tests := []struct {
		name      string
		holder    Identity
		probe     PIDProbe
		wantProbe bool // whether the probe must be consulted
		want      Liveness
		reason    string
	}{
		{"another boot", with(func(id *Identity) { id.BootID = "boot-b" }), PIDProbe{Seen: true, StartTime: 420}, false, Remote, "another process table"},
		{"another pid namespace", with(func(id *Identity) { id.PIDNamespace++ }), PIDProbe{Seen: true, StartTime: 420}, false, Remote, "another process table"},
		{"namespace unknown to holder", with(func(id *Identity) { id.PIDNamespace = 0 }), PIDProbe{Seen: true, StartTime: 420}, false, Remote, "pid namespace 0"},
		{"gone", holder, PIDProbe{Gone: true}, true, Dead, "no process has pid 42"},
		{"zombie", holder, PIDProbe{Seen: true, StartTime: 420, Zombie: true}, true, Dead, "zombie"},
		{"zombie of another start", holder, PIDProbe{Seen: true, StartTime: 1, Zombie: true}, true, Dead, "zombie"},
		{"reused pid", holder, PIDProbe{Seen: true, StartTime: 421}, true, Dead, "start time 421, holder's 420"},
		{"reused pid, earlier start", holder, PIDProbe{Seen: true, StartTime: 419}, true, Dead, "another process"},
		{"same start time", holder, PIDProbe{Seen: true, StartTime: 420}, true, Alive, "holder's start time"},
		{"seen outranks denied", holder, PIDProbe{Seen: true, StartTime: 1, Denied: true}, true, Dead, "another process"},
		{"denied", holder, PIDProbe{Denied: true}, true, Alive, "not ours to signal"},
		{"nothing known", holder, PIDProbe{}, true, Unknown, "cannot be inspected"},
		{"zombie flag unseen", holder, PIDProbe{Zombie: true, StartTime: 420}, true, Unknown, "cannot be inspected"},
		{"renamed host", with(func(id *Identity) { id.Host = "other" }), PIDProbe{Seen: true, StartTime: 420}, true, Alive, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []int
			v := Judge(table, tt.holder, func(pid int) PIDProbe {
				asked = append(asked, pid)
				return tt.probe
			})
			if v.Liveness != tt.want || !strings.Contains(v.Reason, tt.reason) {
				t.Errorf("Judge = %v (%s), want %v with reason containing %q", v.Liveness, v.Reason, tt.want, tt.reason)
			}
			if v.Reason == "" {
				t.Error("empty reason")
			}
			switch {
			case tt.wantProbe && (len(asked) != 1 || asked[0] != tt.holder.PID):
				t.Errorf("probed pids %v, want [%d]", asked, tt.holder.PID)
			case !tt.wantProbe && len(asked) != 0:
				t.Errorf("probed pids %v across process tables", asked)
			}
		})
	}
}

func TestLivenessString(t *testing.T) {
	tests := []struct {
		l    Liveness
		want string
	}{
		{Unknown, "unknown"},
		{Alive, "alive"},
		{Dead, "dead"},
		{Remote, "remote"},
		{Remote + 1, "Liveness(4)"},
		{255, "Liveness(255)"},
	}
	for _, tt := range tests {
		if got := tt.l.String(); got != tt.want {
			t.Errorf("Liveness(%d).String() = %q, want %q", uint8(tt.l), got, tt.want)
		}
	}
	if Unknown != 0 {
		t.Error("the zero Liveness must be Unknown, so that a missing judgement is never proof")
	}
}
