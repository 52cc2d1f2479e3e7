# edgec: the two commands are `make demo` and `make test` (see README.md).
BUILD ?= build
JOBS ?= $(shell nproc)
PY := /usr/bin/python3
PREFIX ?= /usr/local

.PHONY: all deps build demo test unit conformance zoo bad-input install clean

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

test: deps build
	@bash scripts/test.sh $(BUILD)

# The CLI, headers, libedgec, the Python module, the CMake package and edgec.pc under PREFIX.
install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)
