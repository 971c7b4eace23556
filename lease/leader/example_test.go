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

// A follower asks who leads, and where to reach it: the leader publishes
// its address with its lease (Config.Value), and Observe reports each
// change of leader with it, here the first.
func ExampleObserve() {
	repo := lease.NewMemoryRepository()
	leases, err := lease.NewManager(lease.Config{TTL: time.Minute, Heartbeat: 15 * time.Second, Repository: repo})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer leases.Close()
	leading, stop := make(chan struct{}), make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(stop)
		_ = leader.Run(ctx, leader.Config{
			Manager:   leases,
			Key:       "scheduler",
			Value:     "10.0.0.7:8080",
			OnStarted: func(lease.Token) { close(leading) },
			Lead: func(ctx context.Context, token lease.Token) error {
				<-ctx.Done()
				return nil
			},
		})
	}()
	<-leading

	observing, seen := context.WithCancel(context.Background())
	_ = leader.Observe(observing, repo, nil, "scheduler", 100*time.Millisecond, func(l leader.Leader) {
		fmt.Printf("token %d at %s, %v\n", l.Token, l.Value, l.Liveness)
		seen()
	})
	cancel()
	<-stop
	// Output:
	// token 1 at 10.0.0.7:8080, alive
}
