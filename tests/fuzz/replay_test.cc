// The fuzz targets (fuzz/*_fuzz.cc) built with g++ and run on their seed corpora and on every
// input a fuzzer found to crash (fuzz/regressions/<target>/): each must end in a result or a
// heed::Error, nothing else. `make fuzz` (clang, libFuzzer) searches for new such inputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "target.h"

namespace fs = std::filesystem;

namespace {

const fs::path kFuzzDir = fs::path(HEED_SOURCE_DIR) / "fuzz";

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

size_t replay(const std::string& name, const fs::path& dir) {
  const auto& target = heed::fuzz::targets().at(name);
  heed::set_memory_budget(heed::fuzz::kFuzzMemoryBudget);
  size_t n = 0;
  for (const fs::path& file : files_in(dir)) {
    SCOPED_TRACE(file.string());
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NO_THROW(target(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    ++n;
  }
  heed::set_memory_budget(0);
  return n;
}

TEST(Fuzz, EveryTargetHasASeedCorpus) {
  ASSERT_GE(heed::fuzz::targets().size(), 9U);
  for (const auto& [name, target] : heed::fuzz::targets())
    EXPECT_GE(files_in(kFuzzDir / "corpus" / name).size(), 2U) << name;
  // and every corpus or regression folder belongs to a target (a renamed target leaves none)
  for (const char* kind : {"corpus", "regressions"}) {
    if (!fs::is_directory(kFuzzDir / kind)) continue;
    for (const auto& e : fs::directory_iterator(kFuzzDir / kind)) {
      EXPECT_TRUE(heed::fuzz::targets().count(e.path().filename().string())) << e.path();
    }
  }
}

TEST(Fuzz, SeedCorporaReplay) {
  for (const auto& [name, target] : heed::fuzz::targets()) replay(name, kFuzzDir / "corpus" / name);
}

TEST(Fuzz, FoundCrashesStayFixed) {
  for (const auto& [name, target] : heed::fuzz::targets())
    replay(name, kFuzzDir / "regressions" / name);
}

}  // namespace
