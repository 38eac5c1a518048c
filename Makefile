# The two commands of the README: `make demo` and `make test`. Both install what is missing, configure and build.
# Other targets: `make build`, `make bench` (Google Benchmark, Release), `make sanitize` (ASan+UBSan tests),
# `make long` (long property runs), `make clean`.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD := build/default
DEBUG_BUILD := build/debug

.PHONY: deps configure build demo test long bench sanitize clean

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

sanitize: deps
	@cmake --preset debug >/dev/null
	@cmake --build $(DEBUG_BUILD) -j $(JOBS)
	@ctest --preset debug -j $(JOBS)

clean:
	@rm -rf build
