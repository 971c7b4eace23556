package main

import (
	"flag"
	"fmt"
	"time"
)

// durationFlag is fs.Duration with an error that says how to write a
// duration, since "parse error" does not.
func durationFlag(fs *flag.FlagSet, name string, value time.Duration, usage string) *time.Duration {
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
