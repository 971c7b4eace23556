package command

import (
	"flag"
	"fmt"
	"io"
	"time"
)

// DurationFlag is fs.Duration with an error that says how to write a
// duration, since "parse error" does not.
func DurationFlag(fs *flag.FlagSet, name string, value time.Duration, usage string) *time.Duration {
	d := durationValue(value)
	fs.Var(&d, name, usage+" (a `duration`)") // the backquotes name the argument in -help
	return (*time.Duration)(&d)
}

type durationValue time.Duration

func (d *durationValue) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration: write a number and a unit, such as 500ms, 30s, 1m30s or 2h", s)
	}
	*d = durationValue(v)
	return nil
}

func (d *durationValue) String() string { return time.Duration(*d).String() }

// FlagError reports a flag whose value parses but makes no sense, such
// as a negative duration.
type FlagError struct {
	Flag   string // its name, without dashes
	Value  string // its value, as the flag package prints it
	Reason string
}

func (e *FlagError) Error() string {
	return fmt.Sprintf("invalid value %q for flag --%s: %s", e.Value, e.Flag, e.Reason)
}

// NonNegative returns a *FlagError when v, the value of the flag name,
// is negative; zero says what 0 means.
func NonNegative[T ~int | ~int64](name string, v T, zero string) error {
	if v >= 0 {
		return nil
	}
	return &FlagError{Flag: name, Value: fmt.Sprint(v), Reason: fmt.Sprintf("negative; want 0 (%s) or more", zero)}
}

// ReportAll prints each non-nil error of errs on its own line, prefixed
// with cmd, and reports whether there was one.
func ReportAll(stderr io.Writer, cmd string, errs ...error) bool {
	found := false
	for _, err := range errs {
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
			found = true
		}
	}
	return found
}

// FlagSet reports whether the flag name was given.
func FlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
