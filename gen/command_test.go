package gen

import (
	"path/filepath"
	"testing"
)

func TestPackageName(t *testing.T) {
	t.Setenv("GOPACKAGE", "fromgenerate")
	dir := filepath.Join(t.TempDir(), "mydir")
	tests := []struct {
		flag, out, want string
	}{
		{"explicit", dir, "explicit"},
		{"", ".", "fromgenerate"},
		{"", dir, "mydir"},
	}
	for _, tt := range tests {
		if got, err := packageName(tt.flag, tt.out); err != nil || got != tt.want {
			t.Errorf("packageName(%q, %q) = %q, %v; want %q", tt.flag, tt.out, got, err, tt.want)
		}
	}
}
