// SGD, Adam (Kingma & Ba 2015), AdamW (Loshchilov & Hutter 2019) and Adadelta (Zeiler 2012);
// gradient clipping.
// Leaves out: lazy/sparse Adam: row-sparse parameters get the dense update, as in PyTorch's Adam,
// so their moments decay every step like everyone else's.
#include "heed/train/optimizer.h"

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
  }
}

void Optimizer::step(float lr) {
  ++steps_;
  const OptimizerConfig& c = config_;
  const auto& all = params_->all();
  check(all.size() == m_.size(), "optimizer: the parameter store changed after construction");
  // Adam bias corrections: mhat = m / (1 - beta1^t), vhat = v / (1 - beta2^t)
  const float bc1 = 1.f - std::pow(c.beta1, static_cast<float>(steps_));
  const float bc2 = 1.f - std::pow(c.beta2, static_cast<float>(steps_));
  for (size_t k = 0; k < all.size(); ++k) {
    Parameter& p = *all[k];
    float *w = p.value.data(), *g = p.grad.data(), *m = m_[k].data();
    float* v = v_[k].data();
    int64_t n = p.value.numel();
    parallel_for(n, 1 << 14, [&](int64_t b, int64_t e) {
      switch (c.kind) {
        case OptimizerConfig::Kind::Sgd:
#pragma omp simd
          for (int64_t i = b; i < e; ++i) {
            float gi = g[i] + c.weight_decay * w[i];
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
            float gi = g[i] + l2 * w[i];
            m[i] = c.beta1 * m[i] + (1.f - c.beta1) * gi;       // m = b1 m + (1 - b1) g
            v[i] = c.beta2 * v[i] + (1.f - c.beta2) * gi * gi;  // v = b2 v + (1 - b2) g^2
            // p -= lr mhat / (sqrt(vhat) + eps)  [- lr wd p for AdamW]
            w[i] -= lr * (m[i] / bc1) / (std::sqrt(v[i] / bc2) + c.eps) + wd * w[i];
          }
          break;
        }
        case OptimizerConfig::Kind::Adadelta:
#pragma omp simd
          for (int64_t i = b; i < e; ++i) {
            float gi = g[i] + c.weight_decay * w[i];
            // E[g^2] = rho E[g^2] + (1 - rho) g^2   (m: E[g^2], v: E[dx^2])
            m[i] = c.rho * m[i] + (1.f - c.rho) * gi * gi;
            // dx = -sqrt(E[dx^2] + eps) / sqrt(E[g^2] + eps) g;  E[dx^2] = rho E[dx^2] + (1 - rho)
            // dx^2
            const float dx =
                -std::sqrt(v[i] + c.adadelta_eps) / std::sqrt(m[i] + c.adadelta_eps) * gi;
            v[i] = c.rho * v[i] + (1.f - c.rho) * dx * dx;
            w[i] += lr * dx;  // lr 1 in Zeiler's form
          }
          break;
      }
    });
    p.zero_grad();
  }
}

std::vector<std::pair<std::string, Tensor>> Optimizer::state() const {
  std::vector<std::pair<std::string, Tensor>> out;
  const auto& all = params_->all();
  for (size_t k = 0; k < all.size(); ++k) {
    out.emplace_back("m/" + all[k]->name, m_[k]);
    if (v_[k].data()) out.emplace_back("v/" + all[k]->name, v_[k]);
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
  for (size_t k = 0; k < all.size(); ++k) {
    take("m/" + all[k]->name, m_[k]);
    if (v_[k].data()) take("v/" + all[k]->name, v_[k]);
  }
  steps_ = steps;
}

double clip_grad_norm(ParameterStore& params, double max_norm) {
  double ss = 0;
  for (Parameter* p : params.all()) ss += p->grad_sum_squares();
  double norm = std::sqrt(ss);
  if (max_norm > 0 && norm > max_norm) {
    auto scale = static_cast<float>(max_norm / (norm + 1e-6));
    for (Parameter* p : params.all()) {
      if (!p->row_sparse) {
        kernels::scale(p->grad.data(), scale, p->grad.numel());
        continue;
      }
      int64_t row = p->value.shape().inner(0);
      for (int32_t r : p->touched) kernels::scale(p->grad.data() + r * row, scale, row);
    }
  }
  return norm;
}

}  // namespace heed
