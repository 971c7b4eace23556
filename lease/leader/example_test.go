package leader_test

import (
	"context"
	"fmt"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/leader"
)

// A process campaigns for leadership and runs its work while it leads:
// Lead's context is cancelled if the lease is lost, and Run campaigns
// again then. Here the leader finishes its work and steps down.
func ExampleRun() {
	leases, err := lease.NewManager(lease.Config{TTL: time.Minute, Heartbeat: 15 * time.Second, Repository: lease.NewMemoryRepository()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer leases.Close()

	err = leader.Run(context.Background(), leader.Config{
		Manager: leases,
		Key:     "scheduler",
		Lead: func(ctx context.Context, token lease.Token) error {
			fmt.Println("leading with token", token)
			return nil // done: step down
		},
		OnStopped: func(token lease.Token, cause error) { fmt.Println("stopped leading:", cause) },
	})
	fmt.Println("Run:", err)
	// Output:
	// leading with token 1
	// stopped leading: <nil>
	// Run: <nil>
}
