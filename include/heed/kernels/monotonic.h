// Monotonic attention's two recursions over the source, one decoder step i at a time, each
// O(S) per row with its backward beside it.
//
// The expected alignment (Raffel et al. 2017, "Online and Linear-Time Attention by Enforcing
// Monotonic Alignments", eq. 9–12). At step i the decoder, starting where it stopped at step
// i - 1, reads the entries j in order and stops at j with probability p_ij; in expectation
//   alpha_ij = p_ij * sum_{k<=j} alpha_{i-1,k} prod_{l=k}^{j-1} (1 - p_il)
// which the paper computes in closed form,
//   alpha_i = p_i (.) cumprod_excl(1 - p_i) (.) cumsum(alpha_{i-1} / cumprod_excl(1 - p_i)),
// a division by a product of (1 - p) that underflows for long sources and p near 1 (the known
// source of NaNs). The same sum as a first-order recursion has no division at all:
//   q_ij = (1 - p_i,j-1) q_i,j-1 + alpha_i-1,j,   q_i0 = alpha_i-1,0
//   alpha_ij = p_ij q_ij
// (q_ij in [0, 1]: the probability that the decoder reaches entry j at step i). This is what
// the kernel computes, in double, with the backward of the same recursion run in reverse.
//
// MoChA's chunkwise attention (Chiu & Raffel 2018, "Monotonic Chunkwise Attention", eq. 20):
// with the hard stop t_i, soft attention over the w entries ending at t_i; in training the
// expectation over the stops,
//   beta_ij = sum_{k=j}^{j+w-1} alpha_ik exp(u_ij) / sum_{l=k-w+1}^{k} exp(u_il)
// by two moving sums (the window sums D_k and the sums of r_k = alpha_ik / D_k over the
// windows that hold j), with exp(u) shifted by the row's maximum (beta does not change).
// Rows are independent and run in parallel; results do not depend on the thread count.
// Leaves out: the energies (nn/attention/monotonic.cc) and hard decoding (there too).
#pragma once

#include <cstdint>

namespace heed::kernels {

// p, prev [B, S] -> q, alpha [B, S] (q kept for the backward).
void monotonic_alignment_forward(int64_t B, int64_t S, const float* p, const float* prev, float* q,
                                 float* alpha);
// dp, dprev [B, S] += the gradients of alpha's loss, given dalpha [B, S].
void monotonic_alignment_backward(int64_t B, int64_t S, const float* p, const float* q,
                                  const float* dalpha, float* dp, float* dprev);

// Every step of R rows at once (the Transformer's heads, teacher-forced: p is known for all i):
// p [R, T, S] -> q, alpha [R, T, S], step i's alpha_{i-1} the row before it (alpha_{-1} =
// delta_{j,0}: before the first output the decoder stands at the first entry).
void monotonic_alignments_forward(int64_t R, int64_t T, int64_t S, const float* p, float* q,
                                  float* alpha);
// dp [R, T, S] += the gradients of alpha's loss through every step, given dalpha [R, T, S].
void monotonic_alignments_backward(int64_t R, int64_t T, int64_t S, const float* p, const float* q,
                                   const float* dalpha, float* dp);

// alpha, u [B, S] (u = -inf on padding) -> beta [B, S], chunks of w >= 1 entries.
void mocha_chunk_forward(int64_t B, int64_t S, int64_t w, const float* alpha, const float* u,
                         float* beta);
// dalpha, du [B, S] += the gradients of beta's loss, given dbeta [B, S].
void mocha_chunk_backward(int64_t B, int64_t S, int64_t w, const float* alpha, const float* u,
                          const float* dbeta, float* dalpha, float* du);

}  // namespace heed::kernels
