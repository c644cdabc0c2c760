# pqot: `make demo` and `make test` do everything on a fresh Debian 12 machine.
JOBS      ?= $(shell nproc)
CMAKE_GEN ?= -G Ninja
# Seconds per fuzz target in `make test` (a short run per target in the sanitizer build; `make fuzz
# FUZZ_SECONDS=600` for depth in the optimized fuzz build).
FUZZ_SECONDS ?= 6

.PHONY: all deps build build-asan build-fuzz demo demo-signatures demo-srup demo-srup-envelopes demo-trip demo-simulated bench-gateway bench-trip bench-srup bench-crypto-payload test test-release test-release-extras test-asan test-fuzz bench fuzz \
        format tidy clean

all: build

deps:
	@scripts/install-deps.sh

# Release build: binaries in build/bin/. A unity build, as the sanitizer build is (CI time: each
# target's sources compile as a few large files, their headers parsed once per batch). RELEASE_TESTS=all builds every suite (the default);
# `make test` asks for `extras`, the suites only a Release build can run (tests/CMakeLists.txt).
RELEASE_TESTS ?= all
build: deps
	@cmake -S . -B build $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release -DPQOT_RELEASE_TESTS=$(RELEASE_TESTS) \
	    -DCMAKE_UNITY_BUILD=ON >/dev/null
	@cmake --build build -j$(JOBS)

# The sanitizer and fuzz builds use Debian's clang 16 (package clang-16): under ASan+UBSan at -O0
# it compiles this code about twice as fast as GCC 12 (CI time), and clang 14, Debian's default,
# cannot compile Asio's coroutines (docs/architecture.md, "Build"). Named on the command line, so
# that a build directory configured with another compiler is reconfigured.
SAN_CC  ?= clang-16
SAN_CXX ?= clang++-16

# AddressSanitizer + UndefinedBehaviorSanitizer build: build-asan/bin/, the libFuzzer targets
# included (PQOT_FUZZ_TARGETS: `make test` runs their short runs here, so CI compiles the libraries
# with clang once, not twice).
build-asan: deps
	@cmake -S . -B build-asan $(CMAKE_GEN) -DCMAKE_C_COMPILER=$(SAN_CC) -DCMAKE_CXX_COMPILER=$(SAN_CXX) \
	    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPQOT_SANITIZE=ON -DCMAKE_UNITY_BUILD=ON -DPQOT_BENCH=OFF \
	    -DPQOT_FUZZ_TARGETS=ON -DPQOT_FUZZ_SECONDS=$(FUZZ_SECONDS) >/dev/null
	@cmake --build build-asan -j$(JOBS)

# libFuzzer targets (clang), optimized and fully instrumented, for long runs (`make fuzz`):
# build-fuzz/bin/fuzz_*. A unity build, as the others are.
build-fuzz: deps
	@cmake -S . -B build-fuzz $(CMAKE_GEN) -DCMAKE_C_COMPILER=$(SAN_CC) -DCMAKE_CXX_COMPILER=$(SAN_CXX) \
	    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPQOT_FUZZ=ON -DPQOT_FUZZ_SECONDS=$(FUZZ_SECONDS) \
	    -DCMAKE_UNITY_BUILD=ON >/dev/null
	@cmake --build build-fuzz -j$(JOBS)

demo: build
	@scripts/demo.sh

# The crypto core's chapter alone: ML-DSA-65 signatures, refused when changed, moved or forged.
demo-signatures: build
	@scripts/demo-signatures.sh

# SRUP-PQ's envelopes offline (the `srup` tool): a sealed command opened once, refused when
# replayed, moved or redirected; the original SRUP's envelope beside it.
demo-srup-envelopes: build
	@scripts/demo-srup-envelopes.sh

# SRUP-PQ over MQTT alone: mosquitto with TLS and registration, the C2, two meters joining,
# telemetry to a monitor, commands, an update, refused clients and replays, a C2 restart.
demo-srup: build
	@scripts/demo-srup.sh

# TRIP alone (root): a legacy UDP flow through a reflector, three relays on delayed links and a
# filter, in network namespaces; one path flooded, relays killed, the receiver unaffected, live.
demo-trip: build
	@scripts/demo-trip.sh

# The earlier demo: srmcpd on a simulated plant of memory nodes and signals, no Modbus.
demo-simulated: build
	@scripts/demo-simulated.sh

# Every suite in the Release build (developers; `make test` runs the unit, CLI and integration
# suites under the sanitizers instead, and only the Release-only suites here).
test-release: build
	ctest --test-dir build --output-on-failure -j$(JOBS)

# What only the Release build can run: valgrind, the Node.js interop check, the benchmark runs,
# the link checks and the hostile-neighbours suite.
test-release-extras:
	@$(MAKE) --no-print-directory build RELEASE_TESTS=extras
	ctest --test-dir build --output-on-failure -j$(JOBS)

# The sanitizer build runs everything but the valgrind and Node.js interop runs (those check the
# same code in the Release build) and the benchmark runs (timing-bound; Release build only): the
# unit, CLI and integration suites and a short run of every fuzz target (label fuzz). The
# hostile-neighbours suite is not built here (it states srmcpd's memory ceiling, which is the
# Release binary's; and libfaketime cannot be preloaded ahead of the ASan runtime).
test-asan: build-asan
	ctest --test-dir build-asan --output-on-failure -j$(JOBS) -LE 'valgrind|interop|bench'

# The fuzz targets' short runs in their own optimized tree (`make test` runs them in build-asan).
test-fuzz: build-fuzz
	ctest --test-dir build-fuzz --output-on-failure -j$(JOBS) -L fuzz

test: test-asan test-release-extras

# Side-by-side benchmark (docs/benchmarks.md; root needed): make bench [ROUNDS=3] [N=1000]
# [SCENARIOS=loopback,lan,wan] [PROTOCOLS=all] [MODES=all].
ROUNDS    ?= 3
N         ?= 1000
SCENARIOS ?= loopback,lan,wan
PROTOCOLS ?= all
MODES     ?= all
bench: build
	@build/bin/pqot bench crypto
	node bench/run.mjs --rounds $(ROUNDS) --n $(N) --scenarios $(SCENARIOS) --protocols $(PROTOCOLS) \
	    --modes $(MODES)

# The Modbus gateway against direct libmodbus, and polling cost (docs/benchmarks.md, "Modbus gateway").
bench-gateway: build
	node bench/gateway.mjs --rounds $(ROUNDS) --n $(N)

# TRIP in network namespaces: overhead, added latency, three paths under a flood beside a single
# path and wireguard-go, datagrams per CPU-second (docs/benchmarks.md, "TRIP"; root needed). Builds
# only what it runs: tripd, linkem and trip-probe (Release).
bench-trip: deps
	@cmake -S . -B build $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release -DPQOT_RELEASE_TESTS=$(RELEASE_TESTS) \
	    -DCMAKE_UNITY_BUILD=ON >/dev/null
	@cmake --build build -j$(JOBS) --target tripd linkem trip-probe
	node bench/trip.mjs --rounds $(ROUNDS)

# SRUP-PQ commands and telemetry over ten emulated networks beside plain MQTT (without and with
# TLS) and the original SRUP (issue 16; root: namespaces and TUN; about 35 minutes):
# bench/results/srup-latest.json, then docs/benchmarks.md's section "SRUP-PQ over ten networks"
# and docs/img/srup-profiles.png.
bench-srup: deps
	@cmake -S . -B build $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release -DPQOT_RELEASE_TESTS=$(RELEASE_TESTS) \
	    -DCMAKE_UNITY_BUILD=ON >/dev/null
	@cmake --build build -j$(JOBS) --target srup linkem
	node bench/srup.mjs
	node bench/srup-report.mjs

# The energy-monitoring paper's payload-encryption table (issue 16; docs/benchmarks.md, "Payload
# encryption"): `srup bench-payload` in the Release build, results in bench/results/payload-*.json,
# rendered between docs/benchmarks.md's payload markers with plots in docs/img/.
PAYLOAD_MESSAGES ?= 500
bench-crypto-payload: deps
	@cmake -S . -B build $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release -DPQOT_RELEASE_TESTS=$(RELEASE_TESTS) \
	    -DCMAKE_UNITY_BUILD=ON >/dev/null
	@cmake --build build -j$(JOBS) --target srup
	node bench/payload-report.mjs --run build/bin/srup --messages $(PAYLOAD_MESSAGES)

# Longer fuzzing: make fuzz FUZZ_SECONDS=600
fuzz: build-fuzz
	ctest --test-dir build-fuzz --output-on-failure -L fuzz

format:
	@clang-format -i $$(git ls-files '*.cpp' '*.hpp')

tidy: build
	@run-clang-tidy -quiet -p build $$(git ls-files 'src/*.cpp' 'apps/*.cpp') 2>/dev/null || \
	    clang-tidy -p build $$(git ls-files 'src/*.cpp' 'apps/*.cpp')

clean:
	rm -rf build build-asan build-fuzz
