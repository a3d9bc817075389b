// Modified Kneser–Ney estimation (equations in the header).
#include "heed/train/kneser_ney.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "heed/util/error.h"

namespace heed {
namespace {

using Gram = std::vector<int32_t>;
using Counts = std::map<Gram, int64_t>;  // ordered: the ARPA file lists n-grams sorted by id

// D_1, D_2, D_3+ of one order from the counts of its adjusted counts (Chen & Goodman eq. 26).
std::array<double, 3> discounts(const Counts& a, bool skip_bos) {
  std::array<double, 5> t{};  // t[k]: n-grams with adjusted count k, k = 1..4
  for (const auto& [g, c] : a)
    if (c >= 1 && c <= 4 && !(skip_bos && g.front() == NgramLm::kBos)) t[c] += 1;
  std::array<double, 3> d = {0.5, 1.0, 1.5};  // a text too small for the estimate
  if (t[1] > 0 && t[2] > 0 && t[3] > 0 && t[4] > 0) {
    const double y = t[1] / (t[1] + 2 * t[2]);
    const std::array<double, 3> e = {1 - 2 * y * t[2] / t[1], 2 - 3 * y * t[3] / t[2],
                                     3 - 4 * y * t[4] / t[3]};
    bool valid = true;
    for (int k = 0; k < 3; ++k) valid = valid && e[k] > 0 && e[k] < k + 1;
    if (valid) d = e;
  }
  return d;
}

double discount(const std::array<double, 3>& d, int64_t c) {
  return d[static_cast<size_t>(std::min<int64_t>(c, 3) - 1)];
}

// Per context h: sum_x a(h x) and how many continuations have adjusted count 1, 2, 3+.
struct ContextStats {
  double total = 0;
  std::array<double, 3> n{};
  double gamma(const std::array<double, 3>& d) const {
    return (d[0] * n[0] + d[1] * n[1] + d[2] * n[2]) / total;
  }
};

}  // namespace

NgramLm estimate_kneser_ney(const std::vector<std::vector<std::string>>& sentences, int order) {
  NgramLm lm(order);
  const auto N = static_cast<size_t>(order);
  // raw counts of every n-gram of every order (n = 1..N) in <s> w_1 .. w_n </s>
  std::vector<Counts> raw(N);
  for (const auto& sentence : sentences) {
    Gram s = {NgramLm::kBos};
    for (const std::string& w : sentence) {
      check(w != "<s>" && w != "</s>" && w != "<unk>", "lm: the text holds '", w,
            "', which the model keeps for itself");
      s.push_back(lm.add_word(w));
    }
    s.push_back(NgramLm::kEos);
    for (size_t i = 0; i < s.size(); ++i)
      for (size_t n = 1; n <= N && n <= i + 1; ++n)
        ++raw[n - 1][Gram(s.begin() + i + 1 - n, s.begin() + i + 1)];
  }
  check(!sentences.empty(), "lm: no sentences to estimate from");
  // adjusted counts: raw at the highest order and for n-grams opening with <s>; else the number
  // of distinct words seen before them
  std::vector<Counts> a(N);
  a[N - 1] = raw[N - 1];
  for (size_t n = N - 1; n-- > 0;) {
    for (const auto& [g, c] : raw[n])
      if (g.front() == NgramLm::kBos) a[n][g] = c;
    for (const auto& [g, c] : raw[n + 1]) ++a[n][Gram(g.begin() + 1, g.end())];
  }
  // the vocabulary a unigram distribution covers: every word but <s> (<unk> included)
  const double vocab = static_cast<double>(lm.words().size()) - 1;
  std::vector<std::map<Gram, double>> p(N);  // p(w | h) of every seen n-gram h w
  for (size_t n = 0; n < N; ++n) {
    const std::array<double, 3> d = discounts(a[n], n == 0);
    std::map<Gram, ContextStats> ctx;
    for (const auto& [g, c] : a[n]) {
      if (n == 0 && g.front() == NgramLm::kBos) continue;  // <s> is never predicted
      ContextStats& st = ctx[Gram(g.begin(), g.end() - 1)];
      st.total += static_cast<double>(c);
      st.n[static_cast<size_t>(std::min<int64_t>(c, 3) - 1)] += 1;
    }
    for (const auto& [g, c] : a[n]) {
      if (n == 0 && g.front() == NgramLm::kBos) continue;
      const Gram h(g.begin(), g.end() - 1);
      const ContextStats& st = ctx.at(h);
      const double lower = n == 0 ? 1 / vocab : p[n - 1].at(Gram(g.begin() + 1, g.end()));
      p[n][g] = (static_cast<double>(c) - discount(d, c)) / st.total + st.gamma(d) * lower;
    }
    if (n == 0) {  // <unk>: the uniform share only
      const ContextStats& st = ctx.at({});
      p[0][{NgramLm::kUnk}] = st.gamma(d) / vocab;
    }
    // write this order: p(w | h), and on the lower order's entries the contexts' gammas
    for (const auto& [g, prob] : p[n]) lm.set(g, {static_cast<float>(std::log10(prob)), 0.f});
    if (n == 0) lm.set(std::vector<int32_t>{NgramLm::kBos}, {-99.f, 0.f});
    for (const auto& [h, st] : ctx) {
      if (h.empty()) continue;
      const NgramLm::Entry* e = lm.find(h);
      check(e != nullptr, "lm: internal: a context without its n-gram");
      lm.set(h, {e->log10_p, static_cast<float>(std::log10(st.gamma(d)))});
    }
  }
  return lm;
}

}  // namespace heed
