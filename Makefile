# Thin wrapper around CMake. The README's two commands are `make demo` and `make test`.
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60

.PHONY: all bootstrap build demo test unit asan fuzz bench install clean

all: build

bootstrap:
	@scripts/bootstrap

build:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUFO_WERROR=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: bootstrap build
	@scripts/demo

# Every test: the full suite, the sanitizer build of the unit tests, and a fuzz smoke.
test: bootstrap build
	@scripts/run-tests

unit: build
	@cd $(BUILD) && ctest --output-on-failure -L unit

asan:
	@tests/run-sanitized $(CURDIR) $(CURDIR)/$(ASAN_BUILD)

fuzz:
	@UFO_FUZZ_STRICT=1 scripts/fuzz-smoke $(FUZZ_BUILD) $(FUZZ_SECONDS)

bench: build
	@scripts/bench $(BUILD)

install: build
	@cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX))

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
