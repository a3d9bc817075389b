// Layer normalisation kernels (Ba et al. 2016) over the last axis of an [N, D] matrix.
// Leaves out: RMSNorm and batch norm.
#pragma once

#include <cstdint>

namespace heed::kernels {

// y = gamma * (x - mu) * rstd + beta,  mu = mean(x),  rstd = 1 / sqrt(var(x) + eps).
// Saves mu and rstd [N] for the backward.
void layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y,
                        float* mean, float* rstd, int64_t N, int64_t D, float eps);
// With xhat = (x - mu) rstd and dxhat = dy * gamma:
//   dx     += rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))   (= unless accumulate_dx)
//   dgamma += sum_n dy * xhat,   dbeta += sum_n dy        (any of dx/dgamma/dbeta may be null)
void layer_norm_backward(const float* dy, const float* x, const float* gamma, const float* mean,
                         const float* rstd, float* dx, bool accumulate_dx, float* dgamma,
                         float* dbeta, int64_t N, int64_t D);

}  // namespace heed::kernels
