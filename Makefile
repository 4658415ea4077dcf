# Build, run and check records. These targets are the contract: CI
# (.ci/run), the README and Taskfile.yaml all call them.
#
#   make run     build the CLI and serve ./data/records.sqlite on 127.0.0.1:7070
#   make test    gofmt, vet, staticcheck, CGO_ENABLED=0 build, every test of every module
#   make bench   every benchmark, once
#   make bench-cli  the query binary against the sqlite3 shell and Python (scripts/bench-cli.sh)
#   make fuzz    a short run of every fuzz target listed in a FUZZ_TARGETS file
#   make lint    vet, gofmt and staticcheck
#   make soak    the multi-process soaks for SOAK (default 5m each): owners SIGKILLed at random,
#                concurrent drakkar record runs, fleet append racing fleet delete
#
# Each module is built and tested on its own (GOWORK=off), exactly as a user
# who depends on only one of them would.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test

GO ?= go
export GOWORK := off

# The two modules users depend on: the library at the root and the CLI.
MODULES := . cmd/query
# Modules that need cgo (a C compiler): interop links DuckDB to check that
# it reads the spool's Parquet files as specified. Without a C compiler
# they are skipped, with a warning (CI installs gcc).
CGO_MODULES := interop

# Packages of the root module tested under the race detector (it needs cgo,
# hence gcc); every other package is tested without it. Without a C
# compiler they are tested without it too, with a warning (CI installs gcc).
RACE_PKGS ?= ./recordstore/... ./drakkar/...
HAVE_CC := $(shell command -v gcc || command -v cc)
RACE ?= $(if $(HAVE_CC),-race)
CHECKED_MODULES := $(MODULES) $(if $(HAVE_CC),$(CGO_MODULES))

# Ginkgo label filter for every suite, e.g. GINKGO_LABELS='!integration'.
GINKGO_LABELS ?=
# Extra flags for go test, e.g. TEST_FLAGS='-count=1 -v'.
TEST_FLAGS ?=
TEST_TIMEOUT ?= 15m

BENCHTIME ?= 1s
BENCH_PKGS ?= ./...
FUZZTIME ?= 10s

STORE ?= ./data/records.sqlite
ADDR ?= 127.0.0.1:7070

# staticcheck runs at a pinned version with "go run". The module cache is
# asked first, as a proxy, so that a machine that has fetched it once needs
# no network (a plain "go run pkg@version" would look up the module's
# deprecation online); a fresh machine fetches it through GOPROXY.
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
STATICCHECK_PROXY := file://$(shell $(GO) env GOMODCACHE)/cache/download,$(shell $(GO) env GOPROXY)

GINKGO_ARGS := $(if $(GINKGO_LABELS),-args -ginkgo.label-filter='$(GINKGO_LABELS)')

SOAK ?= 5m

.PHONY: soak test-replica all build run test fmt-check vet build-nocgo test-go bench bench-cli fuzz lint staticcheck clean

all: build test

## build: the query binary in bin/query
build:
	cd cmd/query && $(GO) build -o ../../bin/query .

## run: serve the default store over HTTP (Ctrl-C stops it)
run: build
	mkdir -p -m 0700 $(dir $(STORE))
	./bin/query --store $(STORE) serve --addr $(ADDR)

## test: everything CI checks
test: fmt-check vet staticcheck build-nocgo test-go

# Go files of the tree (tracked, or new and not ignored), that still exist.
define go_files
{ git ls-files -co --exclude-standard -- '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'; } | while read -r f; do [ -f "$$f" ] && echo "$$f"; done
endef

fmt-check:
	@echo '== gofmt -l'
	@out="$$($(go_files) | xargs -r gofmt -l)"; \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	@for m in $(CHECKED_MODULES); do echo "== go vet ($$m)"; (cd $$m && $(GO) vet ./...); done

build-nocgo:
	@for m in $(MODULES); do echo "== CGO_ENABLED=0 go build ($$m)"; (cd $$m && CGO_ENABLED=0 $(GO) build ./...); done

test-go:
	@if [ -z "$(RACE)" ]; then echo 'warning: no C compiler found: testing without the race detector (apt-get install gcc)'; fi
	@echo '== go test $(RACE) $(RACE_PKGS)'
	$(GO) test $(RACE) -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) $(RACE_PKGS) $(GINKGO_ARGS)
	@rest="$$(comm -23 <($(GO) list ./... | sort) <($(GO) list $(RACE_PKGS) | sort))"; \
	if [ -n "$$rest" ]; then \
		echo '== go test (the rest of the root module)'; \
		$(GO) test -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) $$rest $(GINKGO_ARGS); \
	fi
	@echo '== go test (cmd/query)'
	cd cmd/query && $(GO) test -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) ./... $(GINKGO_ARGS)
	@for m in $(CGO_MODULES); do \
		if [ -z "$(HAVE_CC)" ]; then echo "warning: no C compiler found: skipping $$m (apt-get install gcc)"; continue; fi; \
		echo "== go test ($$m)"; (cd $$m && $(GO) test -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) ./...); \
	done

## bench: every benchmark of both modules (BENCHTIME=1x for a quick pass)
bench:
	@for m in $(MODULES); do echo "== go test -bench ($$m)"; \
		(cd $$m && $(GO) test -run '^$$' -bench . -benchmem -benchtime=$(BENCHTIME) $(BENCH_PKGS)); done

## bench-cli: query append and scan of ROWS (default 1000000) rows against the sqlite3 shell
## and Python, alternately, ROUNDS (default 3) rounds: medians, ratios, peak RSS
bench-cli:
	scripts/bench-cli.sh

## fuzz: each line "PKG FuzzName" of every FUZZ_TARGETS file, for FUZZTIME.
## PKG is a folder relative to the FUZZ_TARGETS file ("." = that folder) or,
## failing that, relative to the repository root.
fuzz:
	@find . -name FUZZ_TARGETS -not -path './.cache/*' -not -path './.git/*' | sort | while read -r list; do \
		dir="$$(dirname "$$list")"; \
		{ grep -Ev '^[[:space:]]*(#|$$)' "$$list" || true; } | while read -r pkg target _; do \
			from=.; if [ -d "$$dir/$$pkg" ]; then from="$$dir"; fi; \
			echo "== fuzz $$target in $$pkg (from $$from)"; \
			(cd "$$from" && $(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) "$$pkg") || exit 1; \
		done; \
	done

## soak: producers append while owner processes are SIGKILLed at random, for SOAK;
## then every acknowledged row must be stored exactly once. (make test runs a 20s version.)
## Then concurrent query drakkar record runs for one worker name, owners SIGKILLed at random,
## for SOAK: exit 0 if and only if the events are recorded, each once. (make test: 15s.)
## Then query fleet append races query fleet delete --force round after round, for SOAK:
## a deleted store must never come back. (make test: 30s.)
soak:
	RECORDSTORE_SOAK=$(SOAK) $(GO) test -race -timeout 0 -count=1 ./recordstore/owner/ -args -ginkgo.label-filter=soak -ginkgo.v
	cd cmd/query && RECORDSTORE_SOAK=$(SOAK) $(GO) test -timeout 0 -count=1 -run TestQuery . -args -ginkgo.label-filter=soak -ginkgo.v
	cd cmd/query && RECORDS_FLEET_RACE=$(SOAK) $(GO) test -timeout 0 -count=1 -run TestQuery . -args -ginkgo.label-filter=fleetrace -ginkgo.v

## test-replica: the replication, restore, lease and lake specs again and
## again (REPLICA_COUNT times, 5 by default) under the race detector where
## there is a C compiler: the longer run of what make test runs once.
REPLICA_COUNT ?= 5
test-replica:
	$(GO) test $(RACE) -timeout 0 -count=$(REPLICA_COUNT) ./recordstore/replica/ ./recordstore/lake/ ./recordstoretest/s3test/
	$(GO) test $(RACE) -timeout 0 -count=$(REPLICA_COUNT) ./recordstore/owner/ -args -ginkgo.focus='fence|replicator'
	cd cmd/query && $(GO) test -timeout 0 -count=$(REPLICA_COUNT) -run TestQuery . -args -ginkgo.focus='replica|restore|lease|query export|replication tour'

## lint: vet, gofmt and staticcheck over every module (interop only with a C compiler)
lint: fmt-check vet staticcheck

staticcheck:
	@rc=0; for m in $(CHECKED_MODULES); do echo "== staticcheck ($$m)"; (cd $$m && GOPROXY='$(STATICCHECK_PROXY)' $(GO) run $(STATICCHECK) ./...) || rc=1; done; exit $$rc

clean:
	rm -rf bin
