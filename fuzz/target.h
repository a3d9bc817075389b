// The fuzz targets' common frame. Each fuzz/<name>_fuzz.cc defines one target with
// HEED_FUZZ_TARGET(name) { ... data, size ... }: built with clang's libFuzzer (HEED_LIBFUZZER,
// `make fuzz`) it is that binary's LLVMFuzzerTestOneInput; built into heed_tests (g++) it is
// registered by name, and tests/fuzz/replay_test.cc runs it on every file of
// fuzz/corpus/<name>/ and fuzz/regressions/<name>/.
// A target feeds its bytes to one reader. heed::Error is the answer to bad input and is
// caught; anything else (another exception, a crash, a sanitizer report, a hang, memory beyond
// the limit) is a finding.
// Leaves out: the corpora (fuzz/corpus/), the build (CMakeLists.txt, Makefile).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "heed/util/error.h"
#include "heed/util/memory.h"

namespace heed::fuzz {

using Target = std::function<void(const uint8_t* data, size_t size)>;

inline std::map<std::string, Target>& targets() {
  static std::map<std::string, Target> all;
  return all;
}

struct Registration {
  Registration(const char* name, Target target) { targets()[name] = std::move(target); }
};

// A directory of this process's own, for readers that take paths; removed at exit.
inline const std::filesystem::path& scratch_dir() {
  static const struct Scratch {
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("heed_fuzz_" + std::to_string(::getpid()));
    Scratch() { std::filesystem::create_directories(dir); }
    ~Scratch() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } scratch;
  return scratch.dir;
}

// `bytes` written to scratch_dir()/name; its path.
inline std::string write_scratch(const std::string& name, std::string_view bytes) {
  const auto path = scratch_dir() / name;
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path.string();
}

// The input cut into `n` parts at the separator "\n%%\n" (the last part takes the rest; missing
// parts are empty): how targets that read several files get them from one input.
inline std::vector<std::string_view> split_parts(const uint8_t* data, size_t size, size_t n) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  constexpr std::string_view kSep = "\n%%\n";
  while (parts.size() + 1 < n) {
    const size_t at = rest.find(kSep);
    if (at == std::string_view::npos) break;
    parts.push_back(rest.substr(0, at));
    rest.remove_prefix(at + kSep.size());
  }
  parts.push_back(rest);
  parts.resize(n);
  return parts;
}

// Runs `read`, treating heed::Error (the answer to bad input) as success.
template <class F>
void expect_error_or_ok(F&& read) {
  try {
    read();
  } catch (const heed::Error&) {
  }
}

// Models built by the targets stay within the fuzzer's RSS limit (-rss_limit_mb, 2 GiB):
// larger ones must be refused by heed's own check, which this budget exercises.
inline constexpr double kFuzzMemoryBudget = 256.0 * (1 << 20);

}  // namespace heed::fuzz

#define HEED_FUZZ_CONCAT_(a, b) a##b
#define HEED_FUZZ_CONCAT(a, b) HEED_FUZZ_CONCAT_(a, b)

#ifdef HEED_LIBFUZZER
#define HEED_FUZZ_TARGET(name)                                              \
  static void heed_fuzz_body(const uint8_t* data, size_t size);             \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { \
    heed::set_memory_budget(heed::fuzz::kFuzzMemoryBudget);                 \
    heed_fuzz_body(data, size);                                             \
    return 0;                                                               \
  }                                                                         \
  static void heed_fuzz_body(const uint8_t* data, size_t size)
#else
#define HEED_FUZZ_TARGET(name)                                                           \
  static void HEED_FUZZ_CONCAT(heed_fuzz_body_, name)(const uint8_t* data, size_t size); \
  static const heed::fuzz::Registration HEED_FUZZ_CONCAT(heed_fuzz_registration_, name)( \
      #name, HEED_FUZZ_CONCAT(heed_fuzz_body_, name));                                   \
  static void HEED_FUZZ_CONCAT(heed_fuzz_body_, name)(const uint8_t* data, size_t size)
#endif
