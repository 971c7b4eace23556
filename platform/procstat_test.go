package platform

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// statLine builds a /proc/<pid>/stat line as Linux 6 writes it: 52
// fields, the command name in parentheses, starttime at field 22.
func statLine(pid, comm, state, start string) string {
	fields := []string{pid, "(" + comm + ")", state}
	for i := 4; i <= 52; i++ {
		switch i {
		case startTimeField:
			fields = append(fields, start)
		case 8: // tty_pgrp is -1 without a terminal
			fields = append(fields, "-1")
		default:
			fields = append(fields, strconv.Itoa(i*3))
		}
	}
	return strings.Join(fields, " ") + "\n"
}

// formatProcStat writes st back as a stat line that ParseProcStat reads.
// The state byte is written raw (not as a rune), as the kernel does.
func formatProcStat(st ProcStat) []byte {
	line := statLine(strconv.Itoa(st.PID), st.Comm, "?", strconv.FormatUint(st.StartTime, 10))
	b := []byte(line)
	b[strings.LastIndex(line, ") ?")+2] = st.State
	return b
}

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name string
		line string
		want ProcStat
	}{
		{"real init", "1 (systemd) S 0 0 0 0 -1 4194560 31558 305123 0 149 31 208 517 449 20 0 13 0 24 42991616 3142 18446744073709551615 1 1 0 0 0 0 0 4096 1256 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
			ProcStat{PID: 1, Comm: "systemd", State: 'S', StartTime: 24}},
		{"plain", statLine("4242", "cat", "R", "987654"), ProcStat{4242, "cat", 'R', 987654}},
		{"spaces", statLine("7", "a b  c", "S", "1"), ProcStat{7, "a b  c", 'S', 1}},
		{"close paren", statLine("7", "a) b", "S", "2"), ProcStat{7, "a) b", 'S', 2}},
		{"name that looks like fields", statLine("7", "x) Z 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", "S", "3"),
			ProcStat{7, "x) Z 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", 'S', 3}},
		{"open paren", statLine("7", "((a", "S", "4"), ProcStat{7, "((a", 'S', 4}},
		{"parens both ways", statLine("7", ")(", "S", "5"), ProcStat{7, ")(", 'S', 5}},
		{"only parens", statLine("7", "()()", "S", "5"), ProcStat{7, "()()", 'S', 5}},
		{"newline", statLine("7", "a\nb", "S", "6"), ProcStat{7, "a\nb", 'S', 6}},
		{"empty name", statLine("7", "", "S", "7"), ProcStat{7, "", 'S', 7}},
		{"zombie", statLine("7", "sh", "Z", "8"), ProcStat{7, "sh", 'Z', 8}},
		{"max start time", statLine("7", "sh", "S", "18446744073709551615"), ProcStat{7, "sh", 'S', 1<<64 - 1}},
		{"no trailing newline", strings.TrimSuffix(statLine("7", "sh", "S", "9"), "\n"), ProcStat{7, "sh", 'S', 9}},
		{"exactly 22 fields", "7 (sh) S 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 99", ProcStat{7, "sh", 'S', 99}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProcStat([]byte(tt.line))
			if err != nil || got != tt.want {
				t.Errorf("ParseProcStat(%q) = %+v, %v; want %+v", tt.line, got, err, tt.want)
			}
		})
	}
}

func TestParseProcStatRejects(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		reason string
	}{
		{"empty", "", "no parenthesised command name"},
		{"no parens", "7 sh S 1 2 3", "no parenthesised command name"},
		{"no close paren", "7 (sh S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", "no parenthesised command name"},
		{"no open paren", "7 sh) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", "no parenthesised command name"},
		{"close before open", "7 )sh( S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", "no parenthesised command name"},
		{"too few fields", "7 (sh) S 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21", "19 fields after the command name, want at least 20"},
		{"nothing after name", "7 (sh)", "0 fields"},
		{"fields hidden in name", "7 (sh S 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 99)", "0 fields"},
		{"long state", statLine("7", "sh", "RS", "1"), `bad state "RS"`},
		{"multibyte state", statLine("7", "sh", "é", "1"), "bad state"},
		{"start time not a number", statLine("7", "sh", "S", "x"), `bad start time "x"`},
		{"start time negative", statLine("7", "sh", "S", "-1"), `bad start time "-1"`},
		{"start time overflow", statLine("7", "sh", "S", "18446744073709551616"), "bad start time"},
		{"start time fraction", statLine("7", "sh", "S", "1.5"), "bad start time"},
		{"pid missing", statLine("", "sh", "S", "1"), `bad pid ""`},
		{"pid not a number", statLine("x7", "sh", "S", "1"), `bad pid "x7"`},
		{"pid zero", statLine("0", "sh", "S", "1"), `bad pid "0"`},
		{"pid negative", statLine("-7", "sh", "S", "1"), `bad pid "-7"`},
		{"pid overflow", statLine("99999999999999999999", "sh", "S", "1"), "bad pid"},
		{"two pids", statLine("7 8", "sh", "S", "1"), `bad pid "7 8"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProcStat([]byte(tt.line))
			var pe *ProcStatError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseProcStat(%q) = %+v, %v; want a *ProcStatError", tt.line, got, err)
			}
			if got != (ProcStat{}) {
				t.Errorf("failed parse returned %+v", got)
			}
			if !strings.Contains(pe.Reason, tt.reason) {
				t.Errorf("reason %q, want it to contain %q", pe.Reason, tt.reason)
			}
			if !strings.HasPrefix(err.Error(), "platform: malformed /proc stat line: ") {
				t.Errorf("message %q", err)
			}
		})
	}
}

func TestProcStatZombie(t *testing.T) {
	for _, s := range []byte("RSDTtWPIKLV") {
		if (ProcStat{State: s}).Zombie() {
			t.Errorf("state %q counted as a zombie", s)
		}
	}
	for _, s := range []byte("ZXx") {
		if !(ProcStat{State: s}).Zombie() {
			t.Errorf("state %q not counted as exited", s)
		}
	}
}

// FuzzParseProcStat checks that no input panics, that the command name is
// exactly what lies between the first '(' and the last ')', and that a
// parsed line written back parses to the same values. Its seeds are in
// testdata/fuzz/FuzzParseProcStat.
func FuzzParseProcStat(f *testing.F) {
	f.Fuzz(func(t *testing.T, line []byte) {
		st, err := ParseProcStat(line)
		if err != nil {
			var pe *ProcStatError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *ProcStatError", err, err)
			}
			return
		}
		open, closing := bytes.IndexByte(line, '('), bytes.LastIndexByte(line, ')')
		if want := string(line[open+1 : closing]); st.Comm != want {
			t.Fatalf("Comm %q, want %q", st.Comm, want)
		}
		if st.PID <= 0 {
			t.Fatalf("accepted pid %d", st.PID)
		}
		again, err := ParseProcStat(formatProcStat(st))
		if err != nil || again != st {
			t.Fatalf("reparsed %+v as %+v, %v", st, again, err)
		}
	})
}
