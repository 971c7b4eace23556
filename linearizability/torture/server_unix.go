//go:build unix

package torture

import (
	"fmt"
	"time"

	"github.com/rivus/collab/platform"
)

// serverState is the controller's state of server faults.
type serverState struct {
	next    time.Time // when the next fault starts or the current one ends; zero: never
	current *Outage   // the fault in progress, or nil
}

// startServerFaults plans the first server fault, if any.
func (c *controller) startServerFaults() {
	if c.cfg.Server.Faults != nil {
		c.srv.next = c.after(c.cfg.Server.Every)
	}
}

// serverFault starts a fault of the server when none is in progress,
// else ends the one in progress; then plans the next moment.
func (c *controller) serverFault() error {
	s := c.cfg.Server
	if c.srv.current != nil {
		if err := c.endServerFault(); err != nil {
			return err
		}
		c.srv.next = c.after(s.Every)
		return nil
	}
	o := &Outage{Kind: ServerStop, From: platform.RealClock().Monotonic()}
	do := s.Faults.Stop
	if c.rng.IntN(2) == 0 {
		o.Kind, do = ServerPause, s.Faults.Pause
	}
	if err := do(); err != nil {
		return fmt.Errorf("torture: server %s: %w", o.Kind, err)
	}
	c.srv.current = o
	c.srv.next = time.Now().Add(s.Outage + time.Duration(c.rng.Int64N(int64(s.Outage))))
	return nil
}

// endServerFault ends the server fault in progress, if any, counting
// it: the server runs again when it returns without error.
func (c *controller) endServerFault() error {
	o := c.srv.current
	if o == nil {
		return nil
	}
	undo := c.cfg.Server.Faults.Start
	if o.Kind == ServerPause {
		undo = c.cfg.Server.Faults.Resume
	}
	if err := undo(); err != nil {
		return fmt.Errorf("torture: ending server %s: %w", o.Kind, err)
	}
	c.srv.current = nil
	o.To = platform.RealClock().Monotonic()
	c.stats.Outages = append(c.stats.Outages, *o)
	if o.Kind == ServerStop {
		c.stats.ServerStops++
	} else {
		c.stats.ServerPauses++
	}
	return nil
}
