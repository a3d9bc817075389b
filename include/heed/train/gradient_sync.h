// Data-parallel training's gradient sum: after a rank's backward pass, reduce() leaves in every
// rank's Parameter::grad the same Σ_r s_r g_r, the gradient of the global batch's mean loss when
// each rank's s_r is its share of the batch's normaliser (target tokens, sentences): with the
// mean over T = Σ_r T_r tokens, L = Σ_r (T_r / T) L_r, so ∇L = Σ_r (T_r / T) ∇L_r.
// Dense gradients are summed in buckets (small ones packed together, each bucket one
// allreduce; large ones in place); a row-sparse table's (an embedding's) first agrees on the
// union of the rows any rank touched (an OR of row flags), then sums those rows alone.
// Leaves out: overlapping the sums with the backward pass (docs/DISTRIBUTED.md measures why it
// does not pay here) and sharding the optimiser's state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heed/autograd/parameter.h"
#include "heed/dist/communicator.h"

namespace heed {

class GradientSync {
 public:
  // bucket_floats: the most gradient values packed into one allreduce (16 MiB by default)
  explicit GradientSync(dist::Communicator& comm, int64_t bucket_floats = int64_t{1} << 22);
  // grad ← Σ_ranks scale · grad, for every parameter (scale: this rank's share of the loss).
  void reduce(ParameterStore& params, float scale);

 private:
  struct Packed {
    Parameter* p;
    int64_t offset;
  };
  void flush();
  void reduce_rows(Parameter& p, float scale);

  dist::Communicator& comm_;
  int64_t capacity_;
  std::vector<float> bucket_;
  int64_t used_ = 0;
  std::vector<Packed> packed_;
  std::vector<uint8_t> flags_;
  std::vector<int32_t> rows_;
};

// Every rank's parameters compared (a checksum per tensor, its maximum and minimum over the
// ranks): an Error naming the first tensor that differs, and `when`, if any replica drifted.
void check_replicas_agree(dist::Communicator& comm, const ParameterStore& params,
                          const std::string& when);

}  // namespace heed
