// SGD, Adam (Kingma & Ba 2015), AdamW (Loshchilov & Hutter 2019) and Adadelta (Zeiler 2012);
// gradient clipping.
// Adam on row-sparse parameters gets the dense update, as in PyTorch's Adam, so its moments decay
// every step like everyone else's; Adadelta, whose step is zero where the gradient is, updates
// only the rows with a gradient and catches the others' decay up when they next have one (the
// same numbers as the dense update; state() writes the dense values).
// Leaves out: lazy Adam (not the same numbers: its step moves rows without a gradient).
#include "heed/train/optimizer.h"

#include <algorithm>
#include <cmath>

#include "heed/kernels/elementwise.h"
#include "heed/kernels/parallel.h"
#include "heed/util/error.h"

namespace heed {

Optimizer::Optimizer(const OptimizerConfig& config, ParameterStore& params)
    : config_(config), params_(&params) {
  for (Parameter* p : params.all()) {
    m_.push_back(Tensor::zeros(p->value.shape()));
    v_.push_back(config.kind == OptimizerConfig::Kind::Sgd ? Tensor()
                                                           : Tensor::zeros(p->value.shape()));
    last_.emplace_back();
    if (config.smoothing > 0.f) s_.push_back(p->value.clone());
  }
}

namespace {

// Adadelta (Zeiler 2012, Algorithm 1) on entries [b, e):
//   E[g^2] = rho E[g^2] + (1 - rho) g^2                      (m)
//   dx = -sqrt(E[dx^2] + eps) / sqrt(E[g^2] + eps) g
//   E[dx^2] = rho E[dx^2] + (1 - rho) dx^2                   (v);  w += lr dx (lr 1: Zeiler's)
// g scaled by gs (gradient clipping's factor)
void adadelta(const OptimizerConfig& c, float lr, float gs, float* w, const float* g, float* m,
              float* v, int64_t b, int64_t e) {
#pragma omp simd
  for (int64_t i = b; i < e; ++i) {
    const float gi = gs * g[i] + c.weight_decay * w[i];
    m[i] = c.rho * m[i] + (1.f - c.rho) * gi * gi;
    const float dx = -std::sqrt(v[i] + c.adadelta_eps) / std::sqrt(m[i] + c.adadelta_eps) * gi;
    v[i] = c.rho * v[i] + (1.f - c.rho) * dx * dx;
    w[i] += lr * dx;
  }
}

// Exponential smoothing of the weights on entries [b, e):  s = s + a (w - s)
void smooth(float a, const float* w, float* s, int64_t b, int64_t e) {
#pragma omp simd
  for (int64_t i = b; i < e; ++i) s[i] += a * (w[i] - s[i]);
}

// The max-norm constraint (Kim 2014, section 2.1): w = w s / ||w|| for each row whose ||w|| > s.
void limit_row_norms(Parameter& p) {
  const float s = p.max_row_norm;
  if (s <= 0.f) return;
  const int64_t rows = p.value.dim(0), row = p.value.shape().inner(0);
  for (int64_t r = 0; r < rows; ++r) {
    float* w = p.value.data() + r * row;
    const double norm = std::sqrt(kernels::sum_squares(w, row));
    if (norm > s) kernels::scale(w, static_cast<float>(s / norm), row);
  }
}

}  // namespace

void Optimizer::step(float lr, float grad_scale) {
  ++steps_;
  const OptimizerConfig& c = config_;
  const float gs = grad_scale;
  const auto& all = params_->all();
  check(all.size() == m_.size(), "optimizer: the parameter store changed after construction");
  // Adam's bias corrections mhat = m / (1 - beta1^t), vhat = v / (1 - beta2^t) folded into the
  // step size and epsilon (Kingma & Ba 2015, end of section 2): lr mhat / (sqrt(vhat) + eps)
  //   = a m / (sqrt(v) + e),  a = lr sqrt(1 - beta2^t) / (1 - beta1^t),  e = eps sqrt(1 - beta2^t)
  // -- one division and one square root an entry (they bound this loop, not its memory traffic).
  const float bc1 = 1.f - std::pow(c.beta1, static_cast<float>(steps_));
  const float sbc2 = std::sqrt(1.f - std::pow(c.beta2, static_cast<float>(steps_)));
  const float a = lr * sbc2 / bc1, e_hat = c.eps * sbc2;
  for (size_t k = 0; k < all.size(); ++k) {
    Parameter& p = *all[k];
    float *w = p.value.data(), *g = p.grad.data(), *m = m_[k].data();
    float* v = v_[k].data();
    int64_t n = p.value.numel();
    if (lazy(p)) {  // Adadelta on the rows with a gradient, the others' decay caught up later
      std::vector<int64_t>& last = last_[k];
      if (last.empty()) last.assign(static_cast<size_t>(p.value.dim(0)), steps_ - 1);
      const int64_t row = p.value.shape().inner(0);
      for (int32_t r : p.touched) {
        // the steps since the row's last update had g = 0: E[g^2] and E[dx^2] decayed by rho
        // each, dx = 0, w unchanged -- rho^gap at once is the same
        const auto gap = static_cast<float>(steps_ - 1 - last[r]);
        if (gap > 0) {
          const float decay = std::pow(c.rho, gap);
          kernels::scale(m + r * row, decay, row);
          kernels::scale(v + r * row, decay, row);
        }
        adadelta(c, lr, gs, w + r * row, g + r * row, m + r * row, v + r * row, 0, row);
        last[r] = steps_;
      }
      limit_row_norms(p);
      p.zero_grad();
      smooth_weights(k);
      continue;
    }
    // a dense gradient is cleared as it is read (a row-sparse one by zero_grad, its rows only)
    const bool clear = !p.row_sparse;
    parallel_for(n, 1 << 14, [&](int64_t b, int64_t e) {
      switch (c.kind) {
        case OptimizerConfig::Kind::Sgd:
#pragma omp simd
          for (int64_t i = b; i < e; ++i) {
            float gi = gs * g[i] + c.weight_decay * w[i];
            m[i] = c.momentum * m[i] + gi;  // v = mu v + g
            w[i] -= lr * m[i];
          }
          break;
        case OptimizerConfig::Kind::Adam:
        case OptimizerConfig::Kind::AdamW: {
          const bool decoupled = c.kind == OptimizerConfig::Kind::AdamW;
          const float l2 = decoupled ? 0.f : c.weight_decay;
          const float wd = decoupled ? lr * c.weight_decay : 0.f;
#pragma omp simd
          for (int64_t i = b; i < e; ++i) {
            float gi = gs * g[i] + l2 * w[i];
            m[i] = c.beta1 * m[i] + (1.f - c.beta1) * gi;       // m = b1 m + (1 - b1) g
            v[i] = c.beta2 * v[i] + (1.f - c.beta2) * gi * gi;  // v = b2 v + (1 - b2) g^2
            // p -= lr mhat / (sqrt(vhat) + eps)  [- lr wd p for AdamW], as above
            w[i] -= a * m[i] / (std::sqrt(v[i]) + e_hat) + wd * w[i];
          }
          break;
        }
        case OptimizerConfig::Kind::Adadelta:
          adadelta(c, lr, gs, w, g, m, v, b, e);
          break;
      }
      if (clear) std::fill(g + b, g + e, 0.f);  // this block, while it is in cache
    });
    limit_row_norms(p);
    if (!clear) p.zero_grad();
    smooth_weights(k);
  }
}

// s = (1 - a_t) s + a_t w after update t (the header): every row, rows without a gradient too
void Optimizer::smooth_weights(size_t k) {
  if (s_.empty()) return;
  const float a = std::max(config_.smoothing, 1.f / static_cast<float>(steps_));
  const float* w = params_->all()[k]->value.data();
  float* s = s_[k].data();
  parallel_for(s_[k].numel(), 1 << 14, [&](int64_t b, int64_t e) { smooth(a, w, s, b, e); });
}

void Optimizer::swap_smoothed() {
  check(!s_.empty(), "optimizer: no smoothed weights (exponential smoothing is off)");
  const auto& all = params_->all();
  for (size_t k = 0; k < all.size(); ++k)
    std::swap_ranges(s_[k].data(), s_[k].data() + s_[k].numel(), all[k]->value.data());
}

float clip_scale(double norm, double max_norm) {
  return max_norm > 0 && norm > max_norm ? static_cast<float>(max_norm / (norm + 1e-6)) : 1.f;
}

double grad_norm(ParameterStore& params) {
  double ss = 0;
  for (const Parameter* p : params.all()) ss += p->grad_sum_squares();  // the cached view
  return std::sqrt(ss);
}

bool Optimizer::lazy(const Parameter& p) const {
  return p.row_sparse && config_.kind == OptimizerConfig::Kind::Adadelta &&
         config_.weight_decay == 0.f;
}

std::vector<std::pair<std::string, Tensor>> Optimizer::state() const {
  std::vector<std::pair<std::string, Tensor>> out;
  const auto& all = params_->all();
  for (size_t k = 0; k < all.size(); ++k) {
    Tensor m = m_[k], v = v_[k];
    if (!last_[k].empty()) {  // lazy rows: the dense optimizer's values, decay caught up
      m = m_[k].clone();
      v = v_[k].clone();
      const int64_t row = m.shape().inner(0);
      for (size_t r = 0; r < last_[k].size(); ++r) {
        const float decay = std::pow(config_.rho, static_cast<float>(steps_ - last_[k][r]));
        kernels::scale(m.data() + static_cast<int64_t>(r) * row, decay, row);
        kernels::scale(v.data() + static_cast<int64_t>(r) * row, decay, row);
      }
    }
    out.emplace_back("m/" + all[k]->name, m);
    if (v.data()) out.emplace_back("v/" + all[k]->name, v);
    if (!s_.empty()) out.emplace_back("s/" + all[k]->name, s_[k]);
  }
  return out;
}

void Optimizer::load_state(const std::map<std::string, Tensor>& tensors, int64_t steps,
                           const std::string& file) {
  const auto& all = params_->all();
  auto take = [&](const std::string& name, Tensor& dst) {
    auto it = tensors.find(name);
    check(it != tensors.end(), file, ": optimizer state has no tensor '", name, "'");
    check(it->second.shape() == dst.shape(), file, ": optimizer tensor '", name, "' has shape ",
          it->second.shape(), ", the model expects ", dst.shape());
    dst.copy_from(it->second);
  };
  // smoothing on and off across a resume: the moving average would start from nothing, or be
  // dropped while the best model saved so far is one
  const bool saved_smoothed = !all.empty() && tensors.count("s/" + all[0]->name) > 0;
  check(s_.empty() || all.empty() || saved_smoothed, file,
        ": the run was saved without exponential smoothing of its weights; resume it without "
        "--exponential-smoothing, or start over");
  check(!s_.empty() || !saved_smoothed, file,
        ": the run was saved with exponential smoothing of its weights; resume it with "
        "--exponential-smoothing, or start over");
  for (size_t k = 0; k < all.size(); ++k) {
    take("m/" + all[k]->name, m_[k]);
    if (v_[k].data()) take("v/" + all[k]->name, v_[k]);
    if (!s_.empty()) take("s/" + all[k]->name, s_[k]);
    last_[k].clear();  // every row up to date
  }
  steps_ = steps;
}

double clip_grad_norm(ParameterStore& params, double max_norm) {
  const double norm = grad_norm(params);
  const float scale = clip_scale(norm, max_norm);
  if (scale == 1.f) return norm;
  for (Parameter* p : params.all()) {
    if (!p->row_sparse) {
      kernels::scale(p->grad.data(), scale, p->grad.numel());
      continue;
    }
    int64_t row = p->value.shape().inner(0);
    for (int32_t r : p->touched) kernels::scale(p->grad.data() + r * row, scale, row);
  }
  return norm;
}

}  // namespace heed
