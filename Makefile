# The two commands a newcomer needs are `make run` and `make test`; everything else is for us.
SWIFT      ?= swift
VENV       := .build/venv
PYTHON     := $(VENV)/bin/python
SWIFTFLAGS := -Xswiftc -warnings-as-errors
# The debug build `make test` runs carries no debug information: that build takes about 11 % less
# CPU, and a failing test still names its file and line (Swift Testing's source locations are
# not debug information). Build with the same flags to reuse it, e.g. for one suite:
#   swift build --build-tests $(TESTFLAGS)
TESTFLAGS  := $(SWIFTFLAGS) -Xswiftc -gnone
# Release binaries carry the Swift runtime: where they run, only Debian's C libraries are needed
# (docs/deployment.md; scripts/test-bare-debian proves it).
RELEASE    := $(SWIFT) build -c release --static-swift-stdlib $(SWIFTFLAGS)
# The server suites `make test` runs a second time with LATCHKEY_TEST_ENGINE=postgres
# (scripts/test-passes). Left out: the suites that pin SQLite (backup, durability, crash safety,
# full disk, serve, CLI, database copy), those that already run on PostgreSQL
# (PostgreSQLServerTests, AppleOutboxInstancesTests, the contract suites), those whose subject is
# not storage (HTTP framing, configuration, JOSE interop), and the slow browser-driven ones
# (Chromium: BrowserFlow, WebAppleSignIn, ProviderBrowser; Apache).
POSTGRES_SUITES := LatchkeyServerTests\.(AccountProfileTests|AppleLifecycleTests|AppleSignInTests|AppleUpstreamTests|BackgroundJobTests|BrowserSessionTests|ClientAssertionTests|ClientCacheTests|DeviceGrantTests|DeviceKeyTests|DPoPTests|EmailFlowTests|FactorCompareAndSetTests|GrantsTests|HousekeepingTests|IDTokenTests|MFATests|OAuthConformanceTests|OAuthProtocolTests|OAuthRelyingPartyTests|OperationsTests|PasswordAccountTests|PasswordRateLimitTests|PasswordTimingTests|EmailTimingTests|RefreshReuseGraceTests|SessionBindingTests|PasskeyRegistrationTests|PasskeySignInTests|PasskeyAttestationTests|PasskeyOperatorTests|SessionTests|TOTPTests|UpstreamSignInTests|AppAttestEndpointTests|DisabledAccountTests|AdminAPITests|AdminConsoleTests)/

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

# The suites `make test` runs alone, one test at a time, after all the others ran in parallel:
# they measure time (a timeout, a deadline, a latency, which a busy machine stretches) or load
# the whole machine (and would stretch the others'). Every other suite runs in parallel.
empty :=
space := $(empty) $(empty)
# Timeouts, deadlines, latencies.
SERIAL += LatchkeyStoreTests.HealthTests             # the health probe answers within 750 ms
SERIAL += LatchkeyStoreTests.TransactionTests        # busy after the lock timeout; readers within 5 s
SERIAL += LatchkeyStoreTests.PostgreSQLDatabaseTests # pool wait timeout, statement timeout
SERIAL += LatchkeyStoreTests.PostgreSQLOutageTests   # SIGSTOPped backends given up after the response timeout
SERIAL += LatchkeyHTTPTests.HostileClientTests       # header, body and idle timeouts; 2,000 connections
SERIAL += LatchkeyHTTPTests.ChunkedBodyTests         # the body timeout of a chunked body
SERIAL += LatchkeyHTTPTests.ClientTests              # the outbound client's timeouts, "on time"
SERIAL += LatchkeyHTTPTests.LifecycleTests           # shutdown gives up after its deadline
SERIAL += LatchkeyServerTests.SigningKeyChangeFeedTests # a rotated key reaches the other instance within 2 s
SERIAL += LatchkeyServerTests.ClientCacheTests       # a changed client stops working within 2 s
SERIAL += LatchkeyServerTests.PostgreSQLServerTests  # NOTIFY/LISTEN within 2 s, reconnects
SERIAL += LatchkeyServerTests.PasswordTimingTests    # an unknown user's refusal takes as long as a wrong password's
SERIAL += LatchkeyServerTests.EmailTimingTests       # a reset for an unknown address takes as long as for a known one
# Load: servers under load, whose answers are timed.
SERIAL += LatchkeyHTTPTests.ConcurrencyTests        # 32 clients × 25 requests, each answer within 5 s
SERIAL += LatchkeyServerTests.PasswordPoolTests      # 500 logins at once, /healthz p99 within 50 ms
SERIAL += LatchkeyServerTests.CrashSafetyTests       # kill -9 under refresh load, four times
SERIAL += LatchkeyServerTests.ServeTests             # SIGTERM under load: no answer cut in half
SERIAL += LatchkeyServerTests.PostgreSQLInstancesTests # kill -9 under load; a database restart under load, timed
SERIAL_SUITES := ^($(subst $(space),|,$(subst .,\.,$(strip $(SERIAL)))))/
# CPU-heavy suites that time nothing: they run after the parallel passes, in a process of their
# own, one test per core. In the serial pass they kept one core busy and the other idle; in the
# parallel pass their synchronous loops held the task pool's threads (one per core) for tens of
# seconds and stalled every other test of that process; beside the parallel passes, even at nice
# 10, they slowed those by about as much time as they took.
HEAVY += LatchkeyCryptoTests.HostileInputTests       # 100,000 mutated inputs per decoder
HEAVY += LatchkeyJOSETests.HostileInputTests         # 100,000 mutated inputs per decoder
HEAVY += LatchkeyJSONTests.JSONTests                 # 100,000 mutated documents
HEAVY += LatchkeyFuzzTests.FuzzCorpusTests           # replays every fuzz corpus
HEAVY_SUITES := ^($(subst $(space),|,$(subst .,\.,$(strip $(HEAVY)))))/
# Suites that mostly wait, for a minute or more: started first, in a process of their own beside
# the parallel passes, so their minutes overlap the others' instead of trailing them.
LONG += LatchkeyServerTests.EmailDeliveryTests       # an SMTP outage of a minute; a claim's lease of a minute
LONG += LatchkeyClientTests.AppleGlueTypeCheckTests  # one compile of the Apple glue against the stand-ins
LONG_SUITES := ^($(subst $(space),|,$(subst .,\.,$(strip $(LONG)))))/

test: bootstrap
	@scripts/bootstrap test
	# The Python tools install, and the bare Debian of the last step is bootstrapped into its
	# cache, while Swift builds: those mostly wait on the network and the disk, the build on the
	# cores. Each fails the target on its own.
	@mkdir -p .build
	$(MAKE) --no-print-directory $(PYTHON) >.build/venv.log 2>&1 & venv=$$!; \
		scripts/test-bare-debian --prepare >.build/bare-debian.log 2>&1 & bare=$$!; \
		$(SWIFT) build --build-tests $(TESTFLAGS); built=$$?; \
		wait $$venv; installed=$$?; wait $$bare; prepared=$$?; \
		[ $$installed -eq 0 ] || { cat .build/venv.log; echo "make test: installing the Python tools failed" >&2; }; \
		[ $$prepared -eq 0 ] || { cat .build/bare-debian.log; echo "make test: bootstrapping the bare Debian failed" >&2; }; \
		[ $$built -eq 0 ] && [ $$installed -eq 0 ] && [ $$prepared -eq 0 ]
	# The Swift tests (scripts/test-passes): the suites but SERIAL, HEAVY and LONG, in parallel,
	# on SQLite; beside them POSTGRES_SUITES but SERIAL on PostgreSQL (a private cluster the tests
	# start; without PostgreSQL every one of them fails) and LONG; then HEAVY, one test per core;
	# then SERIAL alone, one test at a time.
	SERIAL_SUITES='$(SERIAL_SUITES)' HEAVY_SUITES='$(HEAVY_SUITES)' LONG_SUITES='$(LONG_SUITES)' POSTGRES_SUITES='$(POSTGRES_SUITES)' LATCHKEY_PYTHON=$(abspath $(PYTHON)) \
		scripts/test-passes
	# The release build of the server beside the contract test, which drives the debug `latchkey`
	# already built: the answers of a dev server against docs/openapi.yaml (schemathesis, ~2
	# min). Then the release binary on a bare Debian. (The demo's release build is left to `make
	# run`: the debug build above compiled it with the same warnings.) Both wait for the serial
	# pass: measured beside the parallel suites they saved nothing (those leave few cores idle
	# once Chromium and the dev servers run), and a release build's whole-module compile of the
	# server is one long single-core job that no idle-priority slot finishes in time.
	CONTRACT_LATCHKEY=.build/debug/latchkey scripts/contract-test & contract=$$!; \
		$(RELEASE) --product latchkey; built=$$?; \
		wait $$contract; tested=$$?; [ $$built -eq 0 ] && [ $$tested -eq 0 ]
	scripts/test-bare-debian .build/release/latchkey

bench: build $(PYTHON)
	$(RELEASE) --product latchkey-bench
	$(RELEASE) --product latchkey-sdk-probe
	@scripts/bootstrap bench
	@LATCHKEY_PYTHON=$(PYTHON) scripts/bench

# libFuzzer targets in Fuzz/Targets, FUZZ_SECONDS (default 60) each; fails on any crash.
fuzz: bootstrap
	@scripts/fuzz

clean:
	rm -rf .build
