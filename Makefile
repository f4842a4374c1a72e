# The two commands a newcomer needs are `make run` and `make test`; everything else is for us.
SWIFT      ?= swift
VENV       := .build/venv
PYTHON     := $(VENV)/bin/python
SWIFTFLAGS := -Xswiftc -warnings-as-errors
# Release binaries carry the Swift runtime: where they run, only Debian's C libraries are needed
# (docs/deployment.md; scripts/test-bare-debian proves it).
RELEASE    := $(SWIFT) build -c release --static-swift-stdlib $(SWIFTFLAGS)
# The server suites `make test` runs a second time with LATCHKEY_TEST_ENGINE=postgres.
POSTGRES_SUITES := LatchkeyServerTests\.(AccountProfileTests|AppleLifecycleTests|AppleSignInTests|AppleUpstreamTests|BackgroundJobTests|BrowserSessionTests|ClientAssertionTests|ClientCacheTests|DeviceKeyTests|FactorCompareAndSetTests|GrantsTests|HousekeepingTests|IDTokenTests|MFATests|OAuthConformanceTests|OAuthProtocolTests|OAuthRelyingPartyTests|OperationsTests|PasswordAccountTests|PasswordRateLimitTests|RefreshReuseGraceTests|SessionBindingTests|SessionTests|TOTPTests)/

.PHONY: bootstrap build run test bench fuzz clean

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(RELEASE) --product latchkey
	# `latchkey demo` runs this SDK client, which must sit beside latchkey.
	$(RELEASE) --product latchkey-demo

# Development mode: SQLite and a generated master key under ./latchkey-data, loopback only.
run: build
	.build/release/latchkey serve --dev

# Python tooling: PyJWT and cryptography cross-check our tokens in the interop tests;
# schemathesis checks the server against docs/openapi.yaml.
$(PYTHON): scripts/requirements-test.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r scripts/requirements-test.txt
	@touch $(PYTHON)

test: bootstrap build $(PYTHON)
	@scripts/bootstrap test
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	scripts/test-bare-debian .build/release/latchkey
	# Serially: several suites measure timeouts, and CPU-heavy suites (100,000 mutated inputs
	# each) would starve them of the two task-pool threads this machine has.
	LATCHKEY_PYTHON=$(abspath $(PYTHON)) $(SWIFT) test --skip-build --no-parallel
	# The HTTP suites whose subject is storage, again on PostgreSQL (a private cluster the tests
	# start; without PostgreSQL every one of them fails; ~4 min). Left out: the suites that pin SQLite
	# (backup, durability, crash safety, full disk, serve, CLI, database copy), those that
	# already run on PostgreSQL (PostgreSQLServerTests, AppleOutboxInstancesTests, the contract
	# suites), those whose subject is not storage (HTTP framing, configuration, JOSE interop),
	# and the slow browser-driven ones (Chromium: BrowserFlow, WebAppleSignIn; Apache).
	LATCHKEY_TEST_ENGINE=postgres LATCHKEY_PYTHON=$(abspath $(PYTHON)) $(SWIFT) test --skip-build --no-parallel \
		--filter '$(POSTGRES_SUITES)'
	# The answers of a running dev server against docs/openapi.yaml (schemathesis, ~2.5 min).
	scripts/contract-test

bench: build
	$(RELEASE) --product latchkey-bench
	$(RELEASE) --product latchkey-sdk-probe
	@scripts/bootstrap bench
	@scripts/bench

# libFuzzer targets in Fuzz/Targets, FUZZ_SECONDS (default 60) each; fails on any crash.
fuzz: bootstrap
	@scripts/fuzz

clean:
	rm -rf .build
