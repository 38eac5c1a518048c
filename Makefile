# The two commands of the README: `make demo` and `make test`. Both install what is missing, configure and build.
# Other targets: `make build`, `make bench` (Google Benchmark, Release), `make sanitize` (ASan+UBSan tests, -O1 -g1,
# without the pytest run: the Python extension is not built with sanitizers), `make native` (the kernels' tests built
# with -march=native, and the dispatching kernels compiled for x86-64-v4, -v3 and -v1), `make fuzz` (every libFuzzer
# target for FUZZ_SECONDS seconds each, default 600, its corpus growing in build/fuzz/corpus; docs/reliability.md),
# `make fuzz-smoke` (the short runs CI makes after `make test`; EXACTREF_FUZZ_SECONDS, default 10), `make long` (long
# property runs), `make detection` (the detection-power table docs/detection.md: bench/bench_detection under
# scripts/detection-table, about 20 minutes; not part of `make test`), `make clean`.
# `make demo` and `make test` print the demo and the test results, not the build: configure and build output goes to
# build/logs/*.log, whose last lines and path are printed when a step fails.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD := build/default
DEMO_BUILD := build/demo
SANITIZE_BUILD := build/sanitize
LOGS := build/logs
SHELL := /bin/bash

# $(call logged,LOG-NAME,COMMAND): COMMAND's output into $(LOGS)/LOG-NAME.log; on failure its tail and the path.
logged = mkdir -p $(LOGS) && if ! $(2) > $(LOGS)/$(1).log 2>&1; then \
	  tail -n 40 $(LOGS)/$(1).log; echo "make: '$(2)' failed; the whole output is in $(LOGS)/$(1).log" >&2; exit 1; fi
# ctest's lines for tests that started or passed, left out of the screen (they stay in $(LOGS)/test.log).
CTEST_QUIET := '^ +Start +[0-9]+: |^ *[0-9]+/[0-9]+ +Test +\#[0-9]+: .* +Passed +[0-9.]+ sec$$'
FUZZ_BUILD := build/fuzz
FUZZ_SECONDS ?= 600

.PHONY: deps configure build demo test long bench detection native sanitize fuzz-build fuzz-smoke fuzz clean

deps:
	@scripts/install-deps

configure: deps
	@$(call logged,configure,cmake --preset default)

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The demo preset: the library and examples/atomic_sum_demo only (no tests, benchmarks, CLI or CUDA detection).
demo: deps
	@$(call logged,configure-demo,cmake --preset demo)
	@$(call logged,build-demo,cmake --build --preset demo -j $(JOBS))
	@$(DEMO_BUILD)/examples/atomic_sum_demo

# Every test of the default preset; the screen shows the failures (with their output) and the summary.
test: configure
	@$(call logged,build,cmake --build $(BUILD) -j $(JOBS))
	@echo "Running the tests (the whole ctest output is in $(LOGS)/test.log)"
	@ctest --preset default -j $(JOBS) 2>&1 | tee $(LOGS)/test.log | grep -v -E $(CTEST_QUIET); exit $${PIPESTATUS[0]}

long: build
	@ctest --test-dir $(BUILD) -L long --output-on-failure -j $(JOBS)

bench: build
	@scripts/run-benchmarks $(BUILD)

detection: configure
	@BUILD_DIR=$(BUILD) scripts/detection-table

native: deps
	@cmake --preset native >/dev/null
	@cmake --build --preset native -j $(JOBS)
	@ctest --preset native -j $(JOBS)

sanitize: deps
	@cmake --preset sanitize >/dev/null
	@cmake --build $(SANITIZE_BUILD) -j $(JOBS)
	@ctest --preset sanitize -j $(JOBS)

# The fuzz preset (clang, libFuzzer, ASan+UBSan), built quietly: the log is shown only when the build fails.
fuzz-build: deps
	@$(call logged,configure-fuzz,cmake --preset fuzz)
	@$(call logged,build-fuzz,cmake --build --preset fuzz -j $(JOBS))

# Each target for EXACTREF_FUZZ_SECONDS (default 10; CI: 30) over a copy of its seeds, two at a time.
fuzz-smoke: fuzz-build
	@ctest --preset fuzz -j 2

# Long runs: every target for FUZZ_SECONDS seconds, its corpus kept and grown in build/fuzz/corpus/<name> (seeded
# from tests/fuzz/corpus/<name>; never written back into the source tree). Crashes land in build/fuzz/crashes/.
fuzz: fuzz-build
	@mkdir -p $(FUZZ_BUILD)/crashes
	@for t in $(FUZZ_BUILD)/tests/fuzz/fuzz_*; do \
	  n=$${t##*/fuzz_}; mkdir -p $(FUZZ_BUILD)/corpus/$$n; \
	  echo "fuzz: $$n for $(FUZZ_SECONDS) s"; \
	  $$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_BUILD)/crashes/$$n- $(FUZZ_BUILD)/corpus/$$n tests/fuzz/corpus/$$n || exit 1; \
	done

clean:
	@rm -rf build
