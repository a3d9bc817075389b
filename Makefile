# heed: the two quick-start commands are `make demo` and `make test`.
# Each installs missing Debian packages (scripts/install-deps.sh), configures and builds.
JOBS    ?= $(shell nproc)
BUILD   ?= build
PREFIX  ?= /usr/local
CMAKE_FLAGS ?=

.PHONY: all deps configure test test-asan demo bench install clean format tidy

all: $(BUILD)/heed

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

# Always delegate to CMake: it knows the real dependencies.
.PHONY: $(BUILD)/heed
$(BUILD)/heed: deps configure
	cmake --build $(BUILD) -j $(JOBS) --target heed

test: deps configure
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DHEED_SANITIZE=ON
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp ctest --output-on-failure -j $(JOBS)

# the main job: an attention G2P model trained on the bundled CMUdict split, tested, drawn and
# reported (scripts/demo.sh; DEMO_MINUTES of training, the output in $(BUILD)/demo/)
DEMO_MINUTES ?= 7
demo: $(BUILD)/heed
	bash scripts/demo.sh $(BUILD)/heed $(BUILD)/demo $(DEMO_MINUTES)

bench: deps configure
	cmake --build $(BUILD) -j $(JOBS) --target heed_bench
	$(BUILD)/heed_bench --benchmark_min_time=0.3

install: $(BUILD)/heed
	cmake --install $(BUILD) --prefix $(PREFIX)

format:
	clang-format -i $$(git ls-files '*.h' '*.cc')

tidy: configure
	clang-tidy -p $(BUILD) $$(git ls-files 'src/*.cc' 'cli/*.cc')

clean:
	rm -rf $(BUILD) build-asan
