# The two commands of the README: `make demo` and `make test`. Both install what is missing, configure and build.
# Other targets: `make build`, `make bench` (Google Benchmark, Release), `make sanitize` (ASan+UBSan tests, -O2 -g, without the
# pytest run: the Python extension is not built with sanitizers), `make native` (the kernels' tests built with
# -march=native, and the dispatching kernels compiled for x86-64-v4, -v3 and -v1: issue 12),
# `make long` (long property runs), `make detection` (the detection-power table docs/detection.md: bench/bench_detection
# under scripts/detection-table, about 20 minutes; not part of `make test`), `make clean`.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD := build/default
SANITIZE_BUILD := build/sanitize

.PHONY: deps configure build demo test long bench detection native sanitize clean

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

clean:
	@rm -rf build
