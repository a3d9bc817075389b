// Connectionist Temporal Classification (Graves et al. 2006, §3–4): the probability of a label
// sequence l (length L) given per-frame class scores is the sum over every frame-level path
// that collapses to l (merge repeated classes, then drop blanks). The forward–backward
// recursions run over the extended sequence l' = (blank, l_1, blank, l_2, ..., l_L, blank) of
// length S = 2L + 1, in log space. The sequences of a batch run in parallel, each on one thread,
// so results do not depend on the thread count.
// Leaves out: decoding (greedy best path and prefix beam search live in decode/).
#pragma once

#include <cstdint>

namespace heed::kernels {

struct CtcBatch {
  int64_t B = 0, T = 0, C = 0;              // sequences, frames (padded), classes (blank included)
  int64_t L = 0;                            // the targets' padded width
  const int32_t* input_lengths = nullptr;   // [B]: T_b in 0..T
  const int32_t* targets = nullptr;         // [B, L]: row b's first L_b entries, none blank
  const int32_t* target_lengths = nullptr;  // [B]: L_b in 0..L
  int32_t blank = 0;
};

// Width of a sequence's row of forward (or backward) variables: 2L + 1.
inline int64_t ctc_states(const CtcBatch& p) {
  return 2 * p.L + 1;
}

// Training's forward: log_probs [B, T, C] = log_softmax(logits) over classes; alpha
// [B, T, 2L + 1] the forward variables of each sequence as probabilities normalised per frame
// (Graves et al. 2006, eq. 9: multiply-adds, no log per state), or, for a sequence where that
// underflows float (a frame's sum, or any state that has a path into it), in log space as
// ctc_alpha gives them: space[b] says which (0 normalised, 1 log), for ctc_backward; nll [B]
// as ctc_alpha's.
void ctc_forward(const CtcBatch& p, const float* logits, float* log_probs, float* alpha,
                 int32_t* space, float* nll);
// From log-probabilities [B, T, C]: alpha [B, T, 2L + 1] the forward variables, log alpha_t(s)
// (eq. 5–7), for t < T_b; nll [B] = -log p(l_b | x_b), +inf when no path exists (T_b < L_b +
// the number of equal neighbours in l_b).
void ctc_alpha(const CtcBatch& p, const float* log_probs, float* alpha, float* nll);

// dlogits [B, T, C] += scale[b] * d nll_b / d logits: for t < T_b (eq. 16, the softmax fused in)
//   y_t(c) - 1 / (p y_t(c)) * sum_{s : l'_s = c} alpha_t(s) beta_t(s),  y_t = softmax(logits_t),
// from ctc_forward's alpha and space, with beta [B, T, 2L + 1] the backward variables (eq.
// 10-12, in the same representation; scratch here). A sequence with nll = +inf gets no gradient
// (never NaN).
void ctc_backward(const CtcBatch& p, const float* log_probs, const float* alpha,
                  const int32_t* space, const float* nll, const float* scale, float* beta,
                  float* dlogits);

// gamma [B, T, 2L + 1]: the posterior of each state of l'_b at each frame t < T_b (eq. 14,
// alpha_t(s) beta_t(s) / (y_t(l'_s) p)), each frame's states summing to 1; 0 elsewhere and for
// a sequence with no path. beta [B, T, 2L + 1] is scratch.
void ctc_state_posteriors(const CtcBatch& p, const float* log_probs, const float* alpha,
                          const float* nll, float* beta, float* gamma);

}  // namespace heed::kernels
