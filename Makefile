# The two commands of the README: `make demo` and `make test`. Both install what is missing, configure and build.
# Other targets: `make build`, `make bench` (Google Benchmark, Release), `make sanitize` (ASan+UBSan tests, -O2 -g, without the
# pytest run: the Python extension is not built with sanitizers), `make native` (the kernels' tests built with
# -march=native, and the dispatching kernels compiled for x86-64-v4, -v3 and -v1: issue 12),
# `make fuzz` (every libFuzzer target for FUZZ_SECONDS seconds each, default 600, its corpus growing in
# build/fuzz/corpus; docs/reliability.md), `make fuzz-smoke` (the short runs `make test` ends with; EXACTREF_FUZZ_SECONDS,
# default 10), `make long` (long property runs), `make detection` (the detection-power table docs/detection.md: bench/bench_detection
# under scripts/detection-table, about 20 minutes; not part of `make test`), `make clean`.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD := build/default
SANITIZE_BUILD := build/sanitize
FUZZ_BUILD := build/fuzz
FUZZ_SECONDS ?= 600

.PHONY: deps configure build demo test long bench detection native sanitize fuzz-build fuzz-smoke fuzz clean

deps:
	@scripts/install-deps

configure: deps
	@cmake --preset default >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@$(BUILD)/examples/atomic_sum_demo

test: build
	@ctest --preset default -j $(JOBS)
	@$(MAKE) --no-print-directory fuzz-smoke

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
	@mkdir -p $(FUZZ_BUILD)
	@{ cmake --preset fuzz && cmake --build --preset fuzz -j $(JOBS); } >$(FUZZ_BUILD)/build.log 2>&1 \
	  || { cat $(FUZZ_BUILD)/build.log; exit 1; }

# Each target for EXACTREF_FUZZ_SECONDS (default 10; CI: 60) over a copy of its seeds, two at a time.
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
