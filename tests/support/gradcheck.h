// Test support: random tensors and a finite-difference gradient check for any function of Vars.
// The check builds L = sum(w * f(x...)) with fixed random weights w, backpropagates once, and
// compares every analytic dL/dx (or a random sample of entries for large inputs) with the
// central difference (L(x + eps) - L(x - eps)) / 2 eps, L summed in double.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "heed/autograd/ops.h"
#include "heed/kernels/random.h"

namespace heed::testing {

// Uniform in [lo, hi], optionally kept at least `gap` away from 0 (for relu/max kinks).
inline Tensor random_tensor(const Shape& s, Rng& rng, float lo = -1.f, float hi = 1.f,
                            float gap = 0.f) {
  Tensor t = Tensor::empty(s);
  for (auto& v : t.span()) {
    do v = rng.uniform(lo, hi);
    while (std::fabs(v) < gap);
  }
  return t;
}

using Fn = std::function<Var(Graph&, std::vector<Var>&)>;

struct GradCheck {
  float eps = 1e-2f;   // finite-difference step
  float rtol = 2e-2f;  // |analytic - numeric| <= atol + rtol * max(|analytic|, |numeric|)
  float atol = 1e-3f;
  int max_entries = 48;  // entries checked per input (all when the input is smaller)
  uint64_t seed = 42;
};

// Evaluates sum(w * f(inputs)) in double on a fresh training-mode graph (same seed each time,
// so dropout masks repeat).
inline double weighted_loss(const Fn& f, const std::vector<Tensor>& inputs, const Tensor& w,
                            uint64_t seed) {
  Graph g(Mode::Train, seed);
  std::vector<Var> vars;
  for (const Tensor& t : inputs) vars.push_back(g.variable(t));
  Var out = f(g, vars);
  double s = 0;
  for (int64_t i = 0; i < out.value().numel(); ++i)
    s += static_cast<double>(out.value().data()[i]) * w.data()[i];
  return s;
}

// Runs the check for every input whose index is in `wrt` (all when empty), and for the
// parameters in `params` (which f puts on the graph with g.param).
inline void expect_gradients(const Fn& f, std::vector<Tensor> inputs, const GradCheck& opt = {},
                             std::vector<int> wrt = {}, std::vector<Parameter*> params = {}) {
  Rng rng(opt.seed);
  std::vector<Tensor> analytic, param_grads;
  Tensor w;
  for (Parameter* p : params) p->grad.fill(0.f);
  {
    Graph g(Mode::Train, opt.seed);
    std::vector<Var> vars;
    for (const Tensor& t : inputs) vars.push_back(g.variable(t));
    Var out = f(g, vars);
    w = random_tensor(out.shape(), rng);
    Var loss = sum_all(mul(out, g.constant(w)));
    g.backward(loss);
    for (Var& v : vars)
      analytic.push_back(v.has_grad() ? v.grad().clone() : Tensor::zeros(v.shape()));
    for (Parameter* p : params) param_grads.push_back(p->grad.clone());
  }
  auto check_entries = [&](Tensor& x, const Tensor& grad, const std::string& what) {
    int64_t n = x.numel();
    std::vector<int64_t> entries;
    if (n <= opt.max_entries) {
      for (int64_t i = 0; i < n; ++i) entries.push_back(i);
    } else {
      for (int i = 0; i < opt.max_entries; ++i) entries.push_back(rng.below(n));
    }
    for (int64_t i : entries) {
      float orig = x.data()[i];
      x.data()[i] = orig + opt.eps;
      double up = weighted_loss(f, inputs, w, opt.seed);
      x.data()[i] = orig - opt.eps;
      double down = weighted_loss(f, inputs, w, opt.seed);
      x.data()[i] = orig;
      double numeric = (up - down) / (2.0 * opt.eps);
      double a = grad.data()[i];
      double tol = opt.atol + opt.rtol * std::max(std::fabs(a), std::fabs(numeric));
      EXPECT_NEAR(a, numeric, tol) << what << " " << x.shape().str() << ", entry " << i;
    }
  };
  for (size_t k = 0; k < params.size(); ++k)
    check_entries(params[k]->value, param_grads[k], "parameter " + params[k]->name);
  if (wrt.empty())
    for (size_t i = 0; i < inputs.size(); ++i) wrt.push_back(static_cast<int>(i));
  for (int k : wrt) check_entries(inputs[k], analytic[k], "input " + std::to_string(k));
}

}  // namespace heed::testing
