package keyfile

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivus/collab/lease/store"
)

// suffix ends the names of the files of these tests.
const suffix = ".json"

func TestKeyPath(t *testing.T) {
	long := strings.Repeat("é", 128) // 256 bytes, 768 characters encoded
	enc := strings.Repeat("_c3_a9", 128)
	tests := []struct {
		key  string
		want string
	}{
		{"task-42", "task-42.json"},
		{"task:42", "task_3a42.json"},
		{"A/../b", "_41_2f_2e_2e_2fb.json"},
		{"..", "_2e_2e.json"},
		{"_", "_5f.json"},
		{"ü", "_c3_bc.json"},
		{strings.Repeat("k", 200), strings.Repeat("k", 200) + ".json"},
		{strings.Repeat("k", 201), strings.Repeat("k", 200) + "/k.json"},
		{long, enc[:200] + "/" + enc[200:400] + "/" + enc[400:600] + "/" + enc[600:] + ".json"},
	}
	for _, tt := range tests {
		got, nested := Path("", tt.key, suffix)
		if filepath.ToSlash(got) != tt.want || nested != strings.Contains(tt.want, "/") {
			t.Errorf("Path(%q) = %q, nested %v; want %q", tt.key, got, nested, tt.want)
		}
		for _, part := range strings.Split(tt.want, "/") {
			if len(part) > segmentLen+len(suffix) || strings.HasPrefix(part, ".") {
				t.Errorf("Path(%q) has component %q", tt.key, part)
			}
		}
		if key, err := DecodePath(got, suffix); err != nil || key != tt.key {
			t.Errorf("DecodePath(%q) = %q, %v; want %q", got, key, err, tt.key)
		}
	}
}

func TestDecodeKeyPathRejects(t *testing.T) {
	for _, rel := range []string{
		"task.json.tmp", // wrong suffix
		"Task.json",     // not canonical: upper case stands for itself nowhere
		"_61.json",      // not canonical: 'a' is written plain
		"_2.json",       // escape cut short
		"_zz.json",      // bad escape
		"_2F.json",      // upper-case hex
		".json",         // empty key
		"_00.json",      // NUL
		"_ff.json",      // invalid UTF-8
		"kk/k.json",     // a short directory
		strings.Repeat("k", 201) + ".json",
	} {
		if key, err := DecodePath(rel, suffix); err == nil {
			t.Errorf("DecodePath(%q) = %q, want an error", rel, key)
		}
	}
}

// FuzzKeyPath: every valid key has one file name, within the length limit
// of a name, free of dots at the start, that decodes back to the key.
func FuzzKeyPath(f *testing.F) {
	for _, k := range []string{"task:42", "a/../b", "..", "ü", strings.Repeat("é", 128), strings.Repeat("/", 256)} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if store.ValidateKey(key) != nil {
			return
		}
		rel, _ := Path("", key, FenceSuffix)
		for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
			if part == "" || part[0] == '.' || len(part) > segmentLen+len(FenceSuffix) {
				t.Fatalf("Path(%q) = %q: bad component %q", key, rel, part)
			}
		}
		got, err := DecodePath(rel, FenceSuffix)
		if err != nil || got != key {
			t.Fatalf("DecodePath(Path(%q)) = %q, %v", key, got, err)
		}
	})
}
