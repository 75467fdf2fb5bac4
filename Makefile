# The two commands of the README:
#   make run    builds gangway and starts its main job: the node daemon (gangway serve) on
#               http://127.0.0.1:8000 over 8 emulated GPUs (Ctrl-C drains and stops it)
#   make test   builds the tests and runs each once: the sanitizer build (clang, ASan, UBSan) has
#               the layers' unit tests up to the servers, the randomized simulations, the
#               regressions and each fuzz target's corpus (fuzz/); the normal build has the
#               statistical simulations and the tests of the binary (docs/decisions/sanitizer-scope.md)
# Both install missing Debian packages first (scripts/setup.sh).

JOBS ?= $(shell nproc)
# The normal build leaves the layers' unit tests to the sanitizer build (a build configured by
# hand has them: GANGWAY_LAYER_TESTS defaults to ON).
LAYER_TESTS ?= OFF
# The normal build's tests run one more at a time than there are cores: a third of them mostly
# wait on sockets and timers (end-to-end, wall-clock), and the two fidelity tests run alone anyway.
NORMAL_TEST_JOBS ?= $(shell echo $$(( $(JOBS) + 1 )))
# Ninja schedules the whole build as one graph (no recursive make, no separate dependency scans).
CMAKE_COMMON := -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
# The test builds carry line tables (-g1: file:line in sanitizer reports and backtraces) but not
# full debug information, which cost about a third of their compile time.

.PHONY: run test check setup release test-build asan-build fuzz-build fuzz bench clean

setup:
	@scripts/setup.sh

release: setup
	@cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DGANGWAY_BUILD_TESTS=OFF \
	  -DGANGWAY_BUILD_BENCHMARKS=ON $(CMAKE_COMMON) >/dev/null
	@cmake --build build/release -j$(JOBS)

run: release
	build/release/src/cli/gangway serve examples/serve.yaml

# The normal build: optimized, invariants checked after every event. It builds what needs an
# optimized binary: the gangway binary, the statistical
# simulations, the client and command-line tests, the end-to-end and wall-clock tests, lint.
test-build: setup
	@cmake -S . -B build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGANGWAY_WERROR=ON \
	  -DGANGWAY_CHECK_INVARIANTS=ON -DGANGWAY_BUILD_BENCHMARKS=OFF \
	  -DGANGWAY_LAYER_TESTS=$(LAYER_TESTS) \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" $(CMAKE_COMMON) >/dev/null
	@cmake --build build/test -j$(JOBS)

# The sanitizer build: clang, AddressSanitizer and UndefinedBehaviorSanitizer, invariants checked;
# -O0 but for the simulation layers (-O1, CMakeLists.txt). It holds every layer's unit tests up to
# the servers, the randomized simulations, the regressions and the fuzz corpus replays
# (docs/decisions/sanitizer-scope.md).
asan-build: setup
	@cmake -S . -B build/asan -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
	  -DGANGWAY_WERROR=ON -DGANGWAY_SANITIZE=ON -DGANGWAY_CHECK_INVARIANTS=ON \
	  -DGANGWAY_BUILD_BENCHMARKS=OFF -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" $(CMAKE_COMMON) >/dev/null
	@cmake --build build/asan -j$(JOBS)

# libFuzzer targets (clang, build/fuzz): `make fuzz` replays each committed corpus and searches
# for new inputs for a few seconds per target; scripts/fuzz.sh runs long campaigns.
fuzz-build: setup
	@cmake -S . -B build/fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
	  -DGANGWAY_FUZZ=ON -DGANGWAY_BUILD_TESTS=OFF -DGANGWAY_BUILD_BENCHMARKS=OFF \
	  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" $(CMAKE_COMMON) >/dev/null
	@cmake --build build/fuzz -j$(JOBS) --target gangway_fuzz_targets

fuzz: fuzz-build
	cd build/fuzz && ctest --output-on-failure -j$(JOBS) -L fuzz

# Each test runs in one of the two builds. The sanitizer build's tests run first: they are the
# quick ones, and a memory error is the most useful early failure.
test: asan-build test-build
	cd build/asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j$(JOBS)
	cd build/test && ctest --output-on-failure -j$(NORMAL_TEST_JOBS)

# The inner loop after a change: the sanitizer build (incremental) and its tests but the longest
# randomized search. `make test` runs everything.
check: asan-build
	cd build/asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j$(JOBS) -E 'RandomScenarios\.EveryRequestEndsOnceUnderAny'

bench: release
	build/release/bench/gangway_bench

clean:
	rm -rf build
