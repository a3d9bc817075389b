// Syntactic attention's marginals: Eisner's inside pass, its adjoint (the marginals) and the
// tangents of both (the backward); the equations are in the header.
#include "heed/kernels/dependency_crf.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "heed/kernels/parallel.h"

namespace heed::kernels {
namespace {

constexpr double kNegInf = -INFINITY;

// The four charts of one row, each [N, N] over (s, t): I_r, I_l, C_r, C_l; T = const double
// for charts only read.
template <typename T>
struct ChartsOf {
  T *Ir, *Il, *Cr, *Cl;
  int64_t N;
  ChartsOf(T* base, int64_t N)
      : Ir(base), Il(base + N * N), Cr(base + 2 * N * N), Cl(base + 3 * N * N), N(N) {}
  int64_t at(int64_t s, int64_t t) const { return s * N + t; }
  void fill(double v) const { std::fill(Ir, Ir + 4 * N * N, v); }
};
using Charts = ChartsOf<double>;
using ReadCharts = ChartsOf<const double>;

// theta(h -> m) of one row [N, S]
struct Scores {
  const float* theta;
  int64_t S;
  double operator()(int64_t h, int64_t m) const { return theta[h * S + m - 1]; }
};

// log-sum-exp of term(u) over u in [u0, u1]
template <typename Term>
double lse(int64_t u0, int64_t u1, Term term) {
  double m = kNegInf;
  for (int64_t u = u0; u <= u1; ++u) m = std::max(m, term(u));
  if (m == kNegInf) return m;
  double sum = 0;
  for (int64_t u = u0; u <= u1; ++u) sum += std::exp(term(u) - m);
  return m + std::log(std::max(sum, 1.0));  // (sum >= 1: the largest term adds exp(0))
}

// Inside: the charts of a row of n words (nodes 0..n).
void inside(const Charts& in, const Scores& th, int64_t n) {
  in.fill(kNegInf);
  for (int64_t s = 0; s <= n; ++s) in.Cr[in.at(s, s)] = in.Cl[in.at(s, s)] = 0;
  for (int64_t k = 1; k <= n; ++k)
    for (int64_t s = 0; s + k <= n; ++s) {
      const int64_t t = s + k;
      const double inner =
          lse(s, t - 1, [&](int64_t u) { return in.Cr[in.at(s, u)] + in.Cl[in.at(u + 1, t)]; });
      in.Ir[in.at(s, t)] = inner + th(s, t);
      if (s >= 1) {
        in.Il[in.at(s, t)] = inner + th(t, s);
        in.Cl[in.at(s, t)] =
            lse(s, t - 1, [&](int64_t u) { return in.Cl[in.at(s, u)] + in.Il[in.at(u, t)]; });
      }
      in.Cr[in.at(s, t)] =
          lse(s + 1, t, [&](int64_t u) { return in.Ir[in.at(s, u)] + in.Cr[in.at(u, t)]; });
    }
}

double weight(double term, double total) {
  return total == kNegInf ? 0.0 : std::exp(term - total);
}

// Adjoints d log Z / d cell, widest spans first; within a span the complete cells before the
// incomplete ones they read.
void adjoint(const Charts& in, const Charts& a, const Scores& th, int64_t n) {
  a.fill(0);
  a.Cr[a.at(0, n)] = 1;
  for (int64_t k = n; k >= 1; --k)
    for (int64_t s = 0; s + k <= n; ++s) {
      const int64_t t = s + k, st = in.at(s, t);
      if (const double ac = a.Cr[st]; ac != 0)
        for (int64_t u = s + 1; u <= t; ++u) {
          const double w = ac * weight(in.Ir[in.at(s, u)] + in.Cr[in.at(u, t)], in.Cr[st]);
          a.Ir[a.at(s, u)] += w;
          a.Cr[a.at(u, t)] += w;
        }
      if (const double ac = a.Cl[st]; s >= 1 && ac != 0)
        for (int64_t u = s; u < t; ++u) {
          const double w = ac * weight(in.Cl[in.at(s, u)] + in.Il[in.at(u, t)], in.Cl[st]);
          a.Cl[a.at(s, u)] += w;
          a.Il[a.at(u, t)] += w;
        }
      const double ai = a.Ir[st] + (s >= 1 ? a.Il[st] : 0.0);  // both read in(s, t)
      if (ai == 0) continue;
      const double inner = in.Ir[st] - th(s, t);
      for (int64_t u = s; u < t; ++u) {
        const double w = ai * weight(in.Cr[in.at(s, u)] + in.Cl[in.at(u + 1, t)], inner);
        a.Cr[a.at(s, u)] += w;
        a.Cl[a.at(u + 1, t)] += w;
      }
    }
}

// Tangents of the inside cells along g (the direction, [N, S] like theta).
void inside_tangent(const ReadCharts& in, const Charts& d, const Scores& th, const Scores& g,
                    int64_t n) {
  d.fill(0);
  for (int64_t k = 1; k <= n; ++k)
    for (int64_t s = 0; s + k <= n; ++s) {
      const int64_t t = s + k, st = in.at(s, t);
      const double inner = in.Ir[st] - th(s, t);
      double dinner = 0;
      for (int64_t u = s; u < t; ++u)
        dinner += weight(in.Cr[in.at(s, u)] + in.Cl[in.at(u + 1, t)], inner) *
                  (d.Cr[d.at(s, u)] + d.Cl[d.at(u + 1, t)]);
      d.Ir[st] = dinner + g(s, t);
      if (s >= 1) {
        d.Il[st] = dinner + g(t, s);
        double dc = 0;
        for (int64_t u = s; u < t; ++u)
          dc += weight(in.Cl[in.at(s, u)] + in.Il[in.at(u, t)], in.Cl[st]) *
                (d.Cl[d.at(s, u)] + d.Il[d.at(u, t)]);
        d.Cl[st] = dc;
      }
      double dc = 0;
      for (int64_t u = s + 1; u <= t; ++u)
        dc += weight(in.Ir[in.at(s, u)] + in.Cr[in.at(u, t)], in.Cr[st]) *
              (d.Ir[d.at(s, u)] + d.Cr[d.at(u, t)]);
      d.Cr[st] = dc;
    }
}

// Tangents of the adjoints: a(child). += a(X). w + a(X) w (term. - X.), in adjoint()'s order.
void adjoint_tangent(const ReadCharts& in, const ReadCharts& a, const Charts& d, const Charts& da,
                     const Scores& th, const Scores& g, int64_t n) {
  da.fill(0);
  for (int64_t k = n; k >= 1; --k)
    for (int64_t s = 0; s + k <= n; ++s) {
      const int64_t t = s + k, st = in.at(s, t);
      // push(w, dterm - dX) to the two cells of a term
      auto push = [&](double aX, double daX, double w, double dw_rel, double& c1, double& c2) {
        const double v = daX * w + aX * w * dw_rel;
        c1 += v;
        c2 += v;
      };
      for (int64_t u = s + 1; u <= t; ++u) {
        const double w = weight(in.Ir[in.at(s, u)] + in.Cr[in.at(u, t)], in.Cr[st]);
        push(a.Cr[st], da.Cr[st], w, d.Ir[d.at(s, u)] + d.Cr[d.at(u, t)] - d.Cr[st],
             da.Ir[da.at(s, u)], da.Cr[da.at(u, t)]);
      }
      if (s >= 1)
        for (int64_t u = s; u < t; ++u) {
          const double w = weight(in.Cl[in.at(s, u)] + in.Il[in.at(u, t)], in.Cl[st]);
          push(a.Cl[st], da.Cl[st], w, d.Cl[d.at(s, u)] + d.Il[d.at(u, t)] - d.Cl[st],
               da.Cl[da.at(s, u)], da.Il[da.at(u, t)]);
        }
      const double ai = a.Ir[st] + (s >= 1 ? a.Il[st] : 0.0);
      const double dai = da.Ir[st] + (s >= 1 ? da.Il[st] : 0.0);
      const double inner = in.Ir[st] - th(s, t), dinner = d.Ir[st] - g(s, t);
      for (int64_t u = s; u < t; ++u) {
        const double w = weight(in.Cr[in.at(s, u)] + in.Cl[in.at(u + 1, t)], inner);
        push(ai, dai, w, d.Cr[d.at(s, u)] + d.Cl[d.at(u + 1, t)] - dinner, da.Cr[da.at(s, u)],
             da.Cl[da.at(u + 1, t)]);
      }
    }
}

// arc h -> m's incomplete cell in charts c: I_r(h, m) when h < m, else I_l(m, h)
template <typename T>
double arc(const ChartsOf<T>& c, int64_t h, int64_t m) {
  return h < m ? c.Ir[c.at(h, m)] : c.Il[c.at(m, h)];
}

}  // namespace

int64_t dependency_crf_saved(int64_t S) {
  return 8 * (S + 1) * (S + 1);
}

void dependency_crf_forward(int64_t B, int64_t S, const float* theta, const int32_t* len, float* mu,
                            double* logZ, double* saved) {
  const int64_t N = S + 1;
  parallel_for(B, grain_for(kSerialWork, 8 * S * S * S), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t n = len[b];
      const Scores th{theta + b * N * S, S};
      float* m = mu + b * N * S;
      std::fill(m, m + N * S, 0.f);
      double* keep = saved + b * dependency_crf_saved(S);
      const Charts in(keep, N), a(keep + 4 * N * N, N);
      if (n == 0) {
        logZ[b] = 0;
        in.fill(0);
        a.fill(0);
        continue;
      }
      inside(in, th, n);
      logZ[b] = in.Cr[in.at(0, n)];
      adjoint(in, a, th, n);
      for (int64_t h = 0; h <= n; ++h)
        for (int64_t j = 1; j <= n; ++j)
          if (h != j) m[h * S + j - 1] = static_cast<float>(arc(a, h, j));
    }
  });
}

void dependency_crf_backward(int64_t B, int64_t S, const float* theta, const int32_t* len,
                             const double* saved, const float* dmu, float* dtheta) {
  const int64_t N = S + 1;
  parallel_for(B, grain_for(kSerialWork, 16 * S * S * S), [&](int64_t b0, int64_t b1) {
    std::vector<double> scratch(static_cast<size_t>(8 * N * N));
    const Charts d(scratch.data(), N), da(scratch.data() + 4 * N * N, N);
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t n = len[b];
      if (n == 0) continue;
      const Scores th{theta + b * N * S, S}, g{dmu + b * N * S, S};
      const double* keep = saved + b * dependency_crf_saved(S);
      const ReadCharts in(keep, N), a(keep + 4 * N * N, N);
      inside_tangent(in, d, th, g, n);
      adjoint_tangent(in, a, d, da, th, g, n);
      float* dt = dtheta + b * N * S;
      for (int64_t h = 0; h <= n; ++h)
        for (int64_t j = 1; j <= n; ++j)
          if (h != j) dt[h * S + j - 1] += static_cast<float>(arc(da, h, j));
    }
  });
}

}  // namespace heed::kernels
