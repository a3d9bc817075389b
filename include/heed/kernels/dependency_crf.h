// Syntactic attention's marginals (Kim, Denton, Hoang & Rush 2017, "Structured Attention
// Networks", section 3.3): a first-order projective dependency model over the n words of a row
// and a root (node 0), scores theta(h -> m) for each head h in 0..n and modifier m in 1..n,
//   p(z | x) = exp(sum_{h -> m in z} theta(h -> m)) / Z   over the projective trees z rooted at 0
// (any number of words may hang from the root, as in Eisner 1996 and the paper's code), and the
// attention of word m on node h is the arc marginal mu(h -> m) = p(h -> m in z | x): each column
// m is a distribution over m's parent.
//
// Inside (Eisner's algorithm in log space, log-sum-exp for max): spans s < t, complete (C) and
// incomplete (I) halves, headed at the right (l: the arc points left) or the left (r):
//   in(s, t)   = LSE_{s <= u < t} (C_r(s, u) + C_l(u + 1, t))
//   I_r(s, t)  = in(s, t) + theta(s -> t),   I_l(s, t) = in(s, t) + theta(t -> s)   (s >= 1)
//   C_l(s, t)  = LSE_{s <= u < t} (C_l(s, u) + I_l(u, t))                            (s >= 1)
//   C_r(s, t)  = LSE_{s < u <= t} (I_r(s, u) + C_r(u, t))
// with C(s, s) = 0 and the root never a modifier (I_l(0, t) = C_l(0, t) = -inf);
// log Z = C_r(0, n). The number of trees is C(3n, n) / (2n + 1): 1, 3, 12, 55, 273, ...
//
// The marginals are d log Z / d theta (the outside pass as reverse mode): with a(X) the adjoint
// of cell X and w_u = exp(term_u - X) the weight of X's u-th term,
//   a(C_r(0, n)) = 1,  a(child) += a(X) w_u  for each cell in term u,
//   mu(s -> t) = a(I_r(s, t)),  mu(t -> s) = a(I_l(s, t)).
// The backward: mu = grad log Z, so dL/dtheta = H g with H = d^2 log Z / dtheta^2 (symmetric)
// and g = dL/dmu: the derivative of mu along g, one forward-mode pass (tangents, a dot) over
// both sweeps,
//   X. = sum_u w_u term_u. (+ g(arc) for I cells),   w_u. = w_u (term_u. - X.  (+ g(arc)))
//   a(child). += a(X). w_u + a(X) w_u.,               dL/dtheta(h -> m) = a(I cell of h -> m).
// (The paper backpropagates through the algorithm in a signed log semifield; tangents of
// probabilities in double stay in range, weights being softmaxes.) O(n^3) per row, in double,
// rows in parallel.
// Leaves out: the scores (nn/), non-projective trees (the matrix-tree theorem), single-root
// constraints.
#pragma once

#include <cstdint>

namespace heed::kernels {

// Doubles kept per row between forward and backward: the inside and adjoint charts.
int64_t dependency_crf_saved(int64_t S);  // 8 (S + 1)^2

// theta [B, S + 1, S]: theta[b][h][m - 1] = theta(h -> m), h in 0..S (0: the root), m in 1..S;
// len [B] words per row (each in 0..S) -> mu [B, S + 1, S] (0 outside a row's words and on
// h = m), logZ [B], saved [B, dependency_crf_saved(S)].
void dependency_crf_forward(int64_t B, int64_t S, const float* theta, const int32_t* len, float* mu,
                            double* logZ, double* saved);
// dtheta [B, S + 1, S] += the gradient of the loss given dmu [B, S + 1, S].
void dependency_crf_backward(int64_t B, int64_t S, const float* theta, const int32_t* len,
                             const double* saved, const float* dmu, float* dtheta);

}  // namespace heed::kernels
