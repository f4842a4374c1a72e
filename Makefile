# The two commands a newcomer needs are `make run` and `make test`; everything else is for us.
SWIFT      ?= swift
VENV       := .build/venv
PYTHON     := $(VENV)/bin/python
SWIFTFLAGS := -Xswiftc -warnings-as-errors

.PHONY: bootstrap build run test bench fuzz clean

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(SWIFT) build -c release $(SWIFTFLAGS)

# Development mode: SQLite and a generated master key under ./latchkey-data, loopback only.
run: build
	.build/release/latchkey serve --dev

# Python tooling (PyJWT, cryptography) cross-checks our tokens in the interop tests.
$(PYTHON): scripts/requirements-test.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r scripts/requirements-test.txt
	@touch $(PYTHON)

test: bootstrap $(PYTHON)
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	# Serially: several suites measure timeouts, and CPU-heavy suites (100,000 mutated inputs
	# each) would starve them of the two task-pool threads this machine has.
	LATCHKEY_PYTHON=$(abspath $(PYTHON)) $(SWIFT) test --skip-build --no-parallel

bench: build
	@scripts/bootstrap bench
	@scripts/bench

# libFuzzer targets in Fuzz/Targets, FUZZ_SECONDS (default 60) each; fails on any crash.
fuzz: bootstrap
	@scripts/fuzz

clean:
	rm -rf .build
