// Segmentation attention's marginals (Kim, Denton, Hoang & Rush 2017, "Structured Attention
// Networks", section 3.2): a linear-chain CRF over z_j in {0, 1}, one variable per source
// position j (attend / do not attend), given the query:
//   p(z | x, q) = exp(sum_j theta_j z_j + sum_j A[z_j][z_j+1]) / Z
// with the unary potentials theta_j = score(x_j, q) (z_j = 0: 0) and the pairwise potentials A
// [2, 2] learned; the attention weight of position j is its marginal mu_j = p(z_j = 1 | x, q).
//
// Forward–backward in log space (the paper's Algorithm 1), with theta_j(1) = theta_j,
// theta_j(0) = 0, over the n positions of a row:
//   alpha_0(s) = theta_0(s),  alpha_j(s) = theta_j(s) + LSE_s' (alpha_j-1(s') + A[s'][s])
//   beta_n-1(s) = 0,          beta_j(s) = LSE_s' (A[s][s'] + theta_j+1(s') + beta_j+1(s'))
//   log Z = LSE_s alpha_n-1(s),   mu_j = exp(alpha_j(1) + beta_j(1) - log Z)
// The backward (the paper's section 3.4 backpropagates through the algorithm): mu_j is
// d log Z / d theta_j, so dL/dtheta_k = sum_j g_j d^2 log Z / dtheta_j dtheta_k is the derivative
// of mu_k along the direction g = dL/dmu: one forward–backward of tangents,
//   dalpha_j(s) = g_j [s = 1] + sum_s' w_j(s' -> s) dalpha_j-1(s'),  w: the softmax in alpha_j(s)
//   dbeta_j(s) = sum_s' v_j(s -> s') (g_j+1 [s' = 1] + dbeta_j+1(s')),  v: the softmax in beta_j(s)
//   dlogZ = sum_s softmax(alpha_n-1)(s) dalpha_n-1(s)
//   dL/dtheta_j = mu_j (dalpha_j(1) + dbeta_j(1) - dlogZ)
//   dL/dA[s][s'] = sum_j xi_j(s, s') (dalpha_j(s) + g_j+1 [s' = 1] + dbeta_j+1(s') - dlogZ)
// where xi_j(s, s') = exp(alpha_j(s) + A[s][s'] + theta_j+1(s') + beta_j+1(s') - log Z) is the
// edge marginal. O(n) per row, in double; rows run in parallel.
// Leaves out: the scores theta (nn/), other graph shapes (trees: the syntactic attention).
#pragma once

#include <cstdint>

namespace heed::kernels {

// theta [B, S], A [2, 2], len [B] (each in 0..S; positions at or beyond it: mu = 0)
// -> alpha, beta [B, S, 2] and logZ [B] (kept for the backward), mu [B, S].
void chain_crf_forward(int64_t B, int64_t S, const float* theta, const float* A, const int32_t* len,
                       double* alpha, double* beta, double* logZ, float* mu);
// dtheta [B, S] and dA [2, 2] += the gradients of the loss, given dmu [B, S].
void chain_crf_backward(int64_t B, int64_t S, const float* theta, const float* A,
                        const int32_t* len, const double* alpha, const double* beta,
                        const double* logZ, const float* mu, const float* dmu, float* dtheta,
                        float* dA);

}  // namespace heed::kernels
