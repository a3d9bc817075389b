// Initialisers (Glorot, orthogonal, ...) and Scope.
// Leaves out: data-dependent initialisation.
#include "heed/nn/init.h"

#include <cmath>
#include <vector>

#include "heed/util/error.h"

namespace heed {
namespace {

// Makes the rows (if r <= c) or columns of the r x c block orthonormal by modified
// Gram-Schmidt in double precision, starting from Gaussian entries.
void orthogonal_block(float* w, int64_t r, int64_t c, Rng& rng) {
  bool by_rows = r <= c;
  int64_t n = by_rows ? r : c, len = by_rows ? c : r;
  std::vector<double> q(n * len);
  for (auto& v : q) v = rng.normal();
  for (int64_t i = 0; i < n; ++i) {
    double* qi = q.data() + i * len;
    for (int64_t j = 0; j < i; ++j) {
      const double* qj = q.data() + j * len;
      double d = 0;
      for (int64_t k = 0; k < len; ++k) d += qi[k] * qj[k];
      for (int64_t k = 0; k < len; ++k) qi[k] -= d * qj[k];
    }
    double norm = 0;
    for (int64_t k = 0; k < len; ++k) norm += qi[k] * qi[k];
    norm = std::sqrt(norm);
    for (int64_t k = 0; k < len; ++k) qi[k] /= norm;
  }
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      w[i * c + j] = static_cast<float>(by_rows ? q[i * c + j] : q[j * r + i]);
}

}  // namespace

void initialize(Tensor& t, const Init& init, Rng& rng) {
  const Shape& s = t.shape();
  int64_t n = t.numel();
  float* p = t.data();
  double fan_out = s.rank() ? static_cast<double>(s[0]) : 1.0;
  double fan_in = s.rank() > 1 ? static_cast<double>(n) / fan_out : fan_out;
  switch (init.kind) {
    case Init::Kind::Zeros:
      t.fill(0.f);
      break;
    case Init::Kind::Constant:
      t.fill(init.value);
      break;
    case Init::Kind::Uniform:
      for (int64_t i = 0; i < n; ++i) p[i] = rng.uniform(-init.value, init.value);
      break;
    case Init::Kind::Normal:
      for (int64_t i = 0; i < n; ++i) p[i] = init.value * rng.normal();
      break;
    case Init::Kind::GlorotUniform: {
      auto a = static_cast<float>(std::sqrt(6.0 / (fan_in + fan_out)));
      for (int64_t i = 0; i < n; ++i) p[i] = rng.uniform(-a, a);
      break;
    }
    case Init::Kind::GlorotNormal: {
      auto sd = static_cast<float>(std::sqrt(2.0 / (fan_in + fan_out)));
      for (int64_t i = 0; i < n; ++i) p[i] = sd * rng.normal();
      break;
    }
    case Init::Kind::Orthogonal: {
      check(s.rank() == 2 && init.blocks >= 1 && s[0] % init.blocks == 0,
            "orthogonal init needs a matrix whose rows split into ", init.blocks, " blocks, not ",
            s);
      int64_t rows = s[0] / init.blocks, cols = s[1];
      for (int b = 0; b < init.blocks; ++b) orthogonal_block(p + b * rows * cols, rows, cols, rng);
      break;
    }
  }
}

std::string Scope::path(std::string_view name) const {
  return prefix_.empty() ? std::string(name) : prefix_ + "/" + std::string(name);
}

Parameter& Scope::param(std::string_view name, const Shape& shape, const Init& init,
                        bool row_sparse) const {
  if (expected_ != nullptr) {
    const std::string full = path(name);
    const auto it = expected_->shapes.find(full);
    check(it != expected_->shapes.end(), expected_->file, ": missing tensor '", full, "' of shape ",
          shape.str(), ", which config.json's model has (config and weights ", "disagree)");
    check(it->second == shape, expected_->file, ": tensor '", full, "' has shape ",
          it->second.str(), ", but config.json's model has ", shape.str());
  }
  Parameter& p = store_->add(path(name), shape, row_sparse);
  if (rng_) initialize(p.value, init, *rng_);
  return p;
}

}  // namespace heed
