# edgec: the two commands are `make demo` and `make test` (see README.md).
BUILD ?= build
JOBS ?= $(shell nproc)
PY := /usr/bin/python3
PREFIX ?= /usr/local

.PHONY: all deps build demo test unit conformance zoo bad-input bad-models fuzz fuzz-build install clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release > /dev/null

build: $(BUILD)/CMakeCache.txt
	@env -u MAKEFLAGS -u MAKELEVEL cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

demo: deps build
	@bash scripts/demo.sh

unit: build
	$(BUILD)/bin/edgec_tests --gtest_brief=1

conformance: build
	@bash tests/conformance/run.sh $(BUILD)

zoo: build
	@bash tests/zoo/run.sh $(BUILD)

bad-input: build
	@bash tests/bad_input/run.sh $(BUILD)

# `make test` is the whole suite on the Release build; `make test SANITIZE=address,undefined`
# (or SANITIZE=thread) builds the CLI, the unit tests and the API (or concurrency) tests with
# those sanitizers in a folder of their own and runs them and the model zoo there
# (scripts/sanitize.sh; what each mode runs: docs/reliability.md).
SANITIZE ?=
ifeq ($(SANITIZE),)
test: deps build
	@bash scripts/test.sh $(BUILD)
else
test: deps
	@bash scripts/sanitize.sh $(SANITIZE)
endif

bad-models: build
	@/usr/bin/python3 tests/bad_models/run.py $(BUILD)/bin/edgec $(BUILD)/bad_models

# libFuzzer (clang, tests/fuzz/): every target for FUZZ_SECONDS each, in build-fuzz.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
fuzz-build:
	@bash tests/fuzz/run.sh --build-only $(FUZZ_BUILD)
fuzz:
	@bash tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The CLI, headers, libedgec, the Python module, the CMake package and edgec.pc under PREFIX.
install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)
