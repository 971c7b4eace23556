package policy

// Compile returns a Policy that interprets t, for tables that were parsed
// at run time rather than generated (a user's spec under `collab check`,
// or a mutated spec in a test). Rows are indexed by state and trigger, so
// a step costs a few guard checks, not a scan of the table. t must be
// valid (as gen.Validate returns it) and must not change afterwards.
func Compile(t *Table) Policy {
	n := len(t.Triggers)
	c := &compiled{t: t, triggers: n, rows: make([][]Row, len(t.States)*n), ignored: make([]bool, len(t.States)*n)}
	for _, r := range t.Rows {
		i := int(r.From)*n + int(r.Trigger)
		c.rows[i] = append(c.rows[i], r)
	}
	for _, p := range t.Ignores {
		c.ignored[int(p.State)*n+int(p.Trigger)] = true
	}
	return c
}

type compiled struct {
	t        *Table
	triggers int
	rows     [][]Row // by state*triggers+trigger, in spec order
	ignored  []bool  // by state*triggers+trigger
}

func (c *compiled) Name() string     { return c.t.Name }
func (c *compiled) Family() string   { return c.t.Family }
func (c *compiled) Initial() StateID { return c.t.Initial }
func (c *compiled) Table() *Table    { return c.t }

// Step answers as (*Table).Step does.
func (c *compiled) Step(s StateID, tr TriggerID, f Facts) Result {
	i := int(s)*c.triggers + int(tr)
	if int(s) >= len(c.t.States) || int(tr) >= c.triggers {
		return Result{Next: s, Verdict: Rejected}
	}
	for _, r := range c.rows[i] {
		if r.Guard.Holds(f) {
			return Result{Next: r.To, Outputs: r.Outputs, Verdict: Fired}
		}
	}
	if c.ignored[i] {
		return Result{Next: s, Verdict: Ignored}
	}
	return Result{Next: s, Verdict: Rejected}
}
