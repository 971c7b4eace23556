package torture

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestConfigDefaults(t *testing.T) {
	c := Config{Dir: "run"}.WithDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	want := Config{Dir: "run", Store: StoreSQLite, Seed: 1, Workers: DefaultWorkers, Keys: DefaultKeys,
		Duration: DefaultDuration, TTL: DefaultTTL, Heartbeat: DefaultHeartbeat, KillEvery: DefaultKillEvery,
		PauseEvery: DefaultPauseEvery, Pause: DefaultTTL, CheckTimeout: DefaultCheckTimeout,
		Deadline: 2*DefaultDuration + 2*DefaultCheckTimeout + 30*time.Second, HTML: filepath.Join("run", "history.html")}
	if c.Store != want.Store || c.Seed != want.Seed || c.Workers != want.Workers || c.Keys != want.Keys ||
		c.Duration != want.Duration || c.TTL != want.TTL || c.Heartbeat != want.Heartbeat ||
		c.KillEvery != want.KillEvery || c.PauseEvery != want.PauseEvery || c.Pause != want.Pause ||
		c.CheckTimeout != want.CheckTimeout || c.Deadline != want.Deadline || c.HTML != want.HTML {
		t.Errorf("defaults\n got %+v\nwant %+v", c, want)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		field string
		edit  func(*Config)
	}{
		{"Dir", func(c *Config) { c.Dir = "" }},
		{"Store", func(c *Config) { c.Store = "mysql" }},
		{"PostgresURL", func(c *Config) { c.Store = StorePostgres }},
		{"Server.Outage", func(c *Config) { c.Server.Outage = -1 }},
		{"Server.Faults", func(c *Config) { c.Server.MinStops = 1 }},
		{"Server.Faults", func(c *Config) { c.Server.MinCutOff = 1 }},
		{"Server.MinStops", func(c *Config) { c.Server.MinCutOff = -1 }},
		{"Workers", func(c *Config) { c.Workers = 1 }},
		{"CollabLock", func(c *Config) { c.CollabLock = "collab" }},
		{"Keys", func(c *Config) { c.Keys = -1 }},
		{"Heartbeat", func(c *Config) { c.Heartbeat = c.TTL }},
		{"Pause", func(c *Config) { c.Pause = c.TTL / 2 }},
		{"Deadline", func(c *Config) { c.Deadline = c.Duration }},
		{"MinOps", func(c *Config) { c.MinKills = -1 }},
		{"MinOps", func(c *Config) { c.MinStaleWrites = -1 }},
		{"Command", func(c *Config) { c.Command = []string{} }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			c := Config{Dir: "run"}.WithDefaults()
			tc.edit(&c)
			var ce *ConfigError
			if err := c.Validate(); !errors.As(err, &ce) || ce.Field != tc.field {
				t.Fatalf("Validate() = %v, want a *ConfigError of %s", err, tc.field)
			}
		})
	}
}
