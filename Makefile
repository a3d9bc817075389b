# heed: the two quick-start commands are `make demo` and `make test`.
# Each installs missing Debian packages (scripts/install-deps.sh), configures and builds.
JOBS    ?= $(shell nproc)
BUILD   ?= build
PREFIX  ?= /usr/local
CMAKE_FLAGS ?=

.PHONY: all deps configure test test-asan test-tsan fuzz demo bench install clean format tidy

all: $(BUILD)/heed

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

# Always delegate to CMake: it knows the real dependencies.
.PHONY: $(BUILD)/heed
# (heed first: a tree configured before heed_programs existed regenerates itself on that build)
$(BUILD)/heed: deps configure
	cmake --build $(BUILD) -j $(JOBS) --target heed
	cmake --build $(BUILD) -j $(JOBS) --target heed_programs

test: deps configure
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DHEED_SANITIZE=ON
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp ctest --output-on-failure -j $(JOBS)

# ThreadSanitizer over the test suite with two threads in every kernel (OpenMP through clang's
# libomp and its Archer tool, which TSan understands; oneDNN's own code is not instrumented)
test-tsan:
	@bash scripts/install-deps.sh clang
	CC=clang-14 CXX=clang++-14 cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DHEED_TSAN=ON -DHEED_BUILD_BENCH=OFF
	cmake --build build-tsan -j $(JOBS) --target heed_tests
	cd build-tsan && OMP_NUM_THREADS=2 OMP_TOOL_LIBRARIES=/usr/lib/llvm-14/lib/libarcher.so \
	  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ignore_noninstrumented_modules=1" \
	  ./heed_tests --gtest_brief=1 $(TSAN_GTEST_FLAGS)

# libFuzzer over every reader (fuzz/): each target FUZZ_SECONDS long, FUZZ_JOBS at a time, from
# its seed corpus (fuzz/corpus/); what it finds is kept in build-fuzz/, crashes to be copied to
# fuzz/regressions/<target>/ once fixed (tests/fuzz/replay_test.cc replays them). Needs clang.
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 1
FUZZ_TARGETS ?=
fuzz:
	@bash scripts/install-deps.sh clang
	CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DHEED_FUZZ=ON -DHEED_BUILD_TESTS=OFF -DHEED_BUILD_BENCH=OFF
	cmake --build build-fuzz -j $(JOBS)
	bash scripts/fuzz.sh build-fuzz $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZ_TARGETS)

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
	rm -rf $(BUILD) build-asan build-tsan build-fuzz
