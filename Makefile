# collab: the targets CI and people run. `make help` lists them.
GO ?= go

.PHONY: help install demo generate verify test modelcheck campaign mutants mutants-ci bench bench-lanes cross

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

install: ## install the command line (collab and collab-full, side by side), built without cgo: linked statically, each run starts ~0.3 ms sooner
	CGO_ENABLED=0 $(GO) install ./cmd/collab ./cmd/collab-full

demo: ## the main job: a 25 s torture campaign of real processes, checked by porcupine
	$(GO) build -o $(CURDIR)/.campaign/ ./cmd/collab ./cmd/collab-full
	$(CURDIR)/.campaign/collab-full demo

generate: ## regenerate fsm/ from spec/, and the examples' policies
	$(GO) generate ./...

verify: ## gofmt, vet, staticcheck, tidy, what each package links, and generated code up to date
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags collabmonitor ./...
	$(GO) tool staticcheck ./...
	$(GO) mod tidy -diff
	scripts/check-deps.sh
	$(MAKE) --no-print-directory generate
	@out=$$(git status --porcelain -- spec fsm policy examples); if [ -n "$$out" ]; then echo "generated code is stale; run make generate and commit:"; echo "$$out"; exit 1; fi

test: ## all tests, with the race detector (as root, with loopback PostgreSQL servers it starts)
	scripts/test.sh

modelcheck: ## model-check the shipped policies at the default and the larger bounds, and report the time
	$(GO) build -o $(CURDIR)/.campaign/collab-full ./cmd/collab-full
	@start=$$(date +%s); \
	$(CURDIR)/.campaign/collab-full check && $(CURDIR)/.campaign/collab-full check --larger || exit 1; \
	echo "make modelcheck: $$(( $$(date +%s) - start )) s"

# As root on Linux, one worker in four runs in a pid namespace of its own.
PID_NAMESPACES = $(shell [ "$$(uname)" = Linux ] && [ "$$(id -u)" = 0 ] && echo 1 || echo 0)

# The campaign's collab-full finds collab beside it: on SQLite, half its
# `collab lock` rounds take the lock through the kernel, beside
# collab-full's through SQLite.
campaign: ## the CI fault campaign on SQLite and files (20,000 operations, 200 SIGKILLs, 50 pauses each, contract monitors on), then lanes in-process
	$(GO) build -tags collabmonitor -o $(CURDIR)/.campaign/monitored/ ./cmd/collab ./cmd/collab-full
	@start=$$(date +%s); \
	for store in sqlite file; do \
		$(CURDIR)/.campaign/monitored/collab-full demo --store $$store --duration 20s --keys 4 --pause-every 250ms --pid-namespaces $(PID_NAMESPACES) \
			--min-ops 20000 --min-kills 200 --min-pauses 50 --deadline 10m --lanes 5s --dir $$(mktemp -d) || exit 1; \
	done; \
	echo "make campaign: $$(( $$(date +%s) - start )) s"

# The monitor layer runs the tests of these packages with the contract
# monitors on: a monitor's report in a failing run is a catch; another
# failure, a panic or a hang is reported as what it was.
MONITOR_LAYER = ./lease/... ./lanes ./plock
# The mutants CI runs: each caught by the model checker, a monitor or the
# checker's controls within a few minutes (the other four need a campaign
# or PostgreSQL; make mutants runs them).
MUTANTS_CI = break-silent-holder,leader-lost-term-not-closed,loss-break-reported-moved,loss-deadline-counts-last-failure,batch-one-answer,release-tombstone-restarts-generation,checker-stale-read-accepted,plock-turn-passed-before-release,checker-refusal-always-allowed,leader-leads-on-ended-lease,lanes-cancel-keeps-context,break-keeps-generation,break-unknown-holder,lanes-timeout-after-return,leader-release-before-cancel,leader-stopped-before-release,plock-reclaim-no-recheck,checker-unknown-release-dropped,checker-unknown-unbounded,checker-write-below-generation,fenced-skips-fence,file-save-no-lock,memory-save-no-revision-compare,lanes-cancel-forgets-owed-wake,lanes-cancelled-slot-leaks,lanes-double-activation,lanes-slot-never-released,ours-by-holder,plock-turns-newest-first,renew-conflict-adopted,renew-deadline-from-write-end,spec-release-without-ours,spec-renew-conflict-retried,sqlite-renew-fast-path-no-compare,sqlite-save-no-revision-compare,takeover-not-alive-is-dead,takeover-sighting-kept,takeover-sighting-refreshed,takeover-wall-clock

mutants: ## plant each bug of mutants/*.patch in a scratch copy, report which layer catches it (ONLY=a,b; MUTANTS_FLAGS=-help)
	scripts/with-pg.sh $(GO) run ./mutants -monitor '$(MONITOR_LAYER)' $(if $(ONLY),-only $(ONLY)) $(MUTANTS_FLAGS)

mutants-ci: ## the mutants CI runs: model checker, monitors and the checker's controls, stopping at the first catch
	scripts/with-pg.sh $(GO) run ./mutants -monitor '$(MONITOR_LAYER)' -layers check,monitor,controls -first -report= -only $(MUTANTS_CI)

bench-lanes: ## lanes beside client-go's workqueue, per processed item and per wake (module bench/, which needs k8s.io)
	cd bench && $(GO) test -run='^$$' -bench=. -benchtime=5x

bench: ## benchmarks, each with its in-process baseline, and lanes beside workqueue; writes the README's table
	$(GO) test -p 1 -run='^$$' -bench=. -benchmem ./... > .bench.txt || { cat .bench.txt; exit 1; }
	cd bench && $(GO) test -run='^$$' -bench=. -benchtime=5x >> ../.bench.txt || { cat ../.bench.txt; exit 1; }
	cat .bench.txt
	$(GO) run scripts/bench-table.go README.md < .bench.txt

cross: ## the darwin and windows builds
	GOOS=darwin GOARCH=arm64 $(GO) build ./...
	GOOS=windows GOARCH=amd64 $(GO) build ./...
