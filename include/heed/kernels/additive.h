// The additive (Bahdanau) energy of every memory entry for one decoder step, fused:
//   e_bj = sum_a v_a tanh(K_bja + q_ba)
// (Bahdanau et al. 2015, eq. 6: K = U h_j + b, precomputed per batch; q = W s_{i-1}), without the
// [B, S, A] sum and tanh tensors of the unfused form: the forward keeps only e [B, S], and the
// backward recomputes each tanh (t) for
//   dK_bja += de_bj v_a (1 - t^2),  dq_ba += sum_j de_bj v_a (1 - t^2),  dv_a += sum_bj de_bj t
// Rows b run in parallel; dv is summed per row, then over rows in order, so results do not
// depend on the thread count.
// With a location term (Chorowski et al. 2015, eq. 9), the same without the [B, S, A] tensors
// U f and K + U f:
//   e_bj = sum_a v_a tanh(K_bja + q_ba + sum_l U_al f_bjl)
// where f [B, S, L] are the L convolutional features of the previous alignment; U is read
// transposed (Ut [L, A]) so that each feature's row is one run of A floats.
// Leaves out: masks and the softmax or sigmoid that follow (nn/attention/).
#pragma once

#include <cstdint>

namespace heed::kernels {

// K [B, S, A], q [B, A], v [A] -> e [B, S]
void additive_energy_forward(int64_t B, int64_t S, int64_t A, const float* K, const float* q,
                             const float* v, float* e);
// += the gradients for de [B, S]; any of dK, dq, dv may be null (not wanted). scratch: B x A
// floats when dv is wanted.
void additive_energy_backward(int64_t B, int64_t S, int64_t A, const float* K, const float* q,
                              const float* v, const float* de, float* dK, float* dq, float* dv,
                              float* scratch);

// The location-aware energy: K [B, S, A], f [B, S, L], Ut [L, A], q [B, A], v [A] -> e [B, S].
// scratch: B x A floats.
void location_energy_forward(int64_t B, int64_t S, int64_t A, int64_t L, const float* K,
                             const float* f, const float* Ut, const float* q, const float* v,
                             float* e, float* scratch);
// Where the outputs to compute, wanted or not (null)
struct LocationEnergyGrads {
  float* dK = nullptr;   // [B, S, A]
  float* df = nullptr;   // [B, S, L]
  float* dUt = nullptr;  // [L, A]
  float* dq = nullptr;   // [B, A]
  float* dv = nullptr;   // [A]
};
// += the gradients for de [B, S]. scratch: location_energy_scratch(B, A, L) floats.
void location_energy_backward(int64_t B, int64_t S, int64_t A, int64_t L, const float* K,
                              const float* f, const float* Ut, const float* q, const float* v,
                              const float* de, const LocationEnergyGrads& d, float* scratch);
int64_t location_energy_scratch(int64_t B, int64_t A, int64_t L);

}  // namespace heed::kernels
