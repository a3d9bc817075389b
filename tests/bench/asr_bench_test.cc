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
  run_asr_bench(
      {.n = 2, .reps = 1, .batch = 2, .steps = 1, .d = 32, .utt_s = 0.5, .las_decode_steps = 3},
      out);
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 6u) << out.str();
  EXPECT_EQ(lines[0].at("bench"), "asr_fbank");
  EXPECT_GT(lines[0].at("xrt").get<double>(), 0);
  EXPECT_EQ(lines[1].at("bench"), "asr_ctc_train");
  for (const char* k : {"audio_s_per_s", "frames_per_s", "tgt_labels_per_s", "median_step_ms"})
    EXPECT_GT(lines[1].at(k).get<double>(), 0) << k;
  EXPECT_EQ(lines[2].at("bench"), "asr_ctc_greedy");
  EXPECT_EQ(lines[2].at("batch"), 1);
  EXPECT_EQ(lines[3].at("batch"), 2);
  EXPECT_GT(lines[3].at("rtf").get<double>(), 0);
  EXPECT_EQ(lines[4].at("bench"), "asr_las_train");
  for (const char* k : {"audio_s_per_s", "tgt_tokens_per_s", "median_step_ms"})
    EXPECT_GT(lines[4].at(k).get<double>(), 0) << k;
  EXPECT_EQ(lines[5].at("bench"), "asr_las_greedy");
  EXPECT_GT(lines[5].at("rtf").get<double>(), 0);
  EXPECT_EQ(lines[5].at("out_steps"), 3);
  // without a step count: up to <eos>, at most 200
  std::ostringstream las;
  run_asr_bench({.only = "las", .reps = 1, .batch = 2, .steps = 1, .d = 32, .utt_s = 0.5}, las);
  ASSERT_EQ(lines_of(las.str()).size(), 2u);
  EXPECT_LE(lines_of(las.str())[1].at("out_steps").get<int>(), 200);
  std::ostringstream only;
  run_asr_bench({.only = "features", .n = 1, .reps = 1}, only);
  EXPECT_EQ(lines_of(only.str()).size(), 1u);
  EXPECT_THROW(run_asr_bench({.only = "pblstm"}, only), Error);
}

}  // namespace
}  // namespace heed
