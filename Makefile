# The two commands of the README:
#   make run    builds gangway and starts its main job: the node daemon (gangway serve) on
#               http://127.0.0.1:8000 over 8 emulated GPUs (Ctrl-C drains and stops it)
#   make test   builds the tests (normal and sanitizer builds) and runs them; the sanitizer build
#               covers the layers up to the server and the randomized simulations, leaves out
#               wall-clock tests (label slow), and replays each fuzz target's corpus (fuzz/)
#               (docs/decisions/sanitizer-scope.md)
# Both install missing Debian packages first (scripts/setup.sh).

JOBS ?= $(shell nproc)
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

test-build: setup
	@cmake -S . -B build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGANGWAY_WERROR=ON \
	  -DGANGWAY_CHECK_INVARIANTS=ON -DGANGWAY_BUILD_BENCHMARKS=OFF \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" $(CMAKE_COMMON) >/dev/null
	@cmake --build build/test -j$(JOBS)

asan-build: setup
	@cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DGANGWAY_WERROR=ON -DGANGWAY_SANITIZE=ON \
	  -DGANGWAY_CHECK_INVARIANTS=ON -DGANGWAY_BUILD_BENCHMARKS=OFF \
	  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" $(CMAKE_COMMON) >/dev/null
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

test: test-build asan-build
	cd build/test && ctest --output-on-failure -j$(JOBS)
	cd build/asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j$(JOBS) -LE slow

# The inner loop after a change: the normal test build (incremental) and every test except the
# long ones: the statistical simulations, wall-clock tests, the experiments' quick modes and lint.
# `make test` runs all of them.
check: test-build
	cd build/test && ctest --output-on-failure -j$(JOBS) -LE 'slow|experiments|lint' \
	  -E 'QueueingValidation|GangGuarantees|Overload\.|RandomScenarios'

bench: release
	build/release/bench/gangway_bench

clean:
	rm -rf build
