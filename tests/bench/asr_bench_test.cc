// `heed bench asr` prints the PyTorch peer's JSON lines (asr_bench.py's fields), one per
// measurement: the filterbank's xRT, the BiLSTM-CTC's training rates and greedy decoding's
// real-time factor at batch 1 and at the batch; --only chooses parts; an unknown part is refused.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/bench/asr_bench.h"
#include "heed/util/error.h"

namespace heed {
namespace {

std::vector<nlohmann::json> lines_of(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(AsrBench, PrintsThePeersFields) {
  std::ostringstream out;
  run_asr_bench({.n = 2, .reps = 1, .batch = 2, .steps = 1, .d = 32, .utt_s = 0.5}, out);
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 4u) << out.str();
  EXPECT_EQ(lines[0].at("bench"), "asr_fbank");
  EXPECT_GT(lines[0].at("xrt").get<double>(), 0);
  EXPECT_EQ(lines[1].at("bench"), "asr_ctc_train");
  for (const char* k : {"audio_s_per_s", "frames_per_s", "tgt_labels_per_s", "median_step_ms"})
    EXPECT_GT(lines[1].at(k).get<double>(), 0) << k;
  EXPECT_EQ(lines[2].at("bench"), "asr_ctc_greedy");
  EXPECT_EQ(lines[2].at("batch"), 1);
  EXPECT_EQ(lines[3].at("batch"), 2);
  EXPECT_GT(lines[3].at("rtf").get<double>(), 0);
  std::ostringstream only;
  run_asr_bench({.only = "features", .n = 1, .reps = 1}, only);
  EXPECT_EQ(lines_of(only.str()).size(), 1u);
  EXPECT_THROW(run_asr_bench({.only = "las"}, only), Error);
}

}  // namespace
}  // namespace heed
