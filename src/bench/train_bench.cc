// The training-speed line (see the header).
// Leaves out: timing (the loop measured the steps).
#include "heed/bench/train_bench.h"

#include <algorithm>

#include "heed/bench/measure.h"
#include "heed/util/names.h"

namespace heed::bench {

nlohmann::json training_speed(const LoopResult& r, Precision precision,
                              const MachineInfo& machine) {
  const double secs = std::max(r.step_seconds, 1e-9);
  const double tokens = static_cast<double>(std::max<int64_t>(r.run_tokens, 1));
  const double achieved = r.step_flops / secs / 1e9;  // GFLOP/s of the products
  const bool bf16 = precision == Precision::bf16 && machine.bf16_gflops > 0;
  const double ceiling = bf16 ? machine.bf16_gflops : machine.sgemm_gflops;
  // "tgt tok" (seq2seq) as the PyTorch peers name it; a classifier's tokens are its inputs
  const std::string per_s = r.token_name == "tgt tok" ? "train_tgt_tok_per_s" : "train_tok_per_s";
  return {{"bench", "train"},
          {"steps", r.run_steps},
          {"step_seconds", round_to(r.step_seconds, 2)},
          {per_s, round_to(static_cast<double>(r.run_tokens) / secs, 1)},
          {"updates_per_s", round_to(static_cast<double>(r.run_steps) / secs, 3)},
          {"peak_rss_mb", maxrss_mb()},
          {"params", r.params},
          {"precision", name_of(precision)},
          {"gflop_per_token", round_to(r.step_flops / tokens / 1e9, 4)},
          {"achieved_gflops", round_to(achieved, 1)},
          {"mfu", ceiling > 0 ? nlohmann::json(round_to(achieved / ceiling, 3)) : nullptr},
          {"mfu_against", bf16 ? "bf16_gflops" : "sgemm_gflops"}};
}

}  // namespace heed::bench
