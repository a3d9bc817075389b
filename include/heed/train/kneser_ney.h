// Interpolated modified Kneser–Ney estimation of an n-gram model (Chen & Goodman 1998, §3;
// what KenLM's lmplz computes), from sentences of units (`heed lm`):
//   a(h w)  = c(h w) at the highest order and for n-grams that start with <s>; otherwise the
//             number of distinct words seen before h w (its continuation count)
//   D_1, D_2, D_3+ per order, from the counts of counts t_1..t_4 of a at that order:
//             Y = t_1 / (t_1 + 2 t_2),  D_k = k - (k + 1) Y t_{k+1} / t_k
//   p(w | h) = (a(h w) - D(a(h w))) / sum_x a(h x) + gamma(h) p(w | h')
//   gamma(h) = (D_1 N_1(h .) + D_2 N_2(h .) + D_3+ N_3+(h .)) / sum_x a(h x)
// with h' the context without its first word, and the unigrams interpolated with the uniform
// distribution over the vocabulary (</s> and <unk> included, <s> not). The ARPA entries are
// p(w | h) of every seen n-gram and log10 gamma(h) as back-off, so that unseen n-grams back off
// to exactly the interpolated value; every context's distribution sums to 1.
// Leaves out: pruning, and discounts of a text too small for counts of counts (then fixed:
// D = 0.5, 1.0, 1.5).
#pragma once

#include <string>
#include <vector>

#include "heed/models/ngram_lm.h"

namespace heed {

NgramLm estimate_kneser_ney(const std::vector<std::vector<std::string>>& sentences, int order);

}  // namespace heed
