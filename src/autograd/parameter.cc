// Parameter and ParameterStore.
// Leaves out: serialisation (io/safetensors.cc).
#include "heed/autograd/parameter.h"

#include <cstring>

#include "heed/kernels/elementwise.h"
#include "heed/kernels/layout.h"
#include "heed/util/error.h"
#include "heed/util/memory.h"

namespace heed {

void Parameter::mark_rows(std::span<const int32_t> rows) {
  if (!row_sparse) return;
  if (is_touched.empty()) is_touched.assign(static_cast<size_t>(value.dim(0)), 0);
  for (int32_t r : rows)
    if (!is_touched[r]) {
      is_touched[r] = 1;
      touched.push_back(r);
    }
}

void Parameter::zero_grad() {
  if (!row_sparse) {
    grad.fill(0.f);
    return;
  }
  int64_t row = value.shape().inner(0);
  for (int32_t r : touched) {
    std::memset(grad.data() + r * row, 0, row * sizeof(float));
    is_touched[r] = 0;
  }
  touched.clear();
}

double Parameter::grad_sum_squares() const {
  if (!row_sparse) return kernels::sum_squares(grad.data(), grad.numel());
  int64_t row = value.shape().inner(0);
  double s = 0;
  for (int32_t r : touched) s += kernels::sum_squares(grad.data() + r * row, row);
  return s;
}

Parameter& ParameterStore::add(const std::string& name, const Shape& shape, bool row_sparse) {
  check(!index_.count(name), "parameter '", name, "' is defined twice");
  check(!row_sparse || shape.rank() >= 1, "row-sparse parameter '", name, "' needs rows");
  for (int64_t k = 0; k < shape.rank(); ++k)
    check(shape[k] >= 1, "parameter '", name, "' of shape ", shape.str(),
          ": every size must be at least 1 (a model config with a zero or negative size?)");
  // a model too large for the machine is refused here, before any allocation fails: its
  // weights and gradients (Adam's moments come on top)
  check_memory(
      8.0 * (static_cast<double>(numel()) + static_cast<double>(shape.numel())),
      "parameter '" + name + "' of shape " + shape.str() + ": the model's weights and gradients");
  auto p = std::make_unique<Parameter>();
  p->name = name;
  p->value = Tensor::zeros(shape);
  p->grad = Tensor::zeros(shape);
  p->row_sparse = row_sparse;
  index_[name] = params_.size();
  params_.push_back(std::move(p));
  ptrs_.push_back(params_.back().get());
  return *params_.back();
}

Parameter& ParameterStore::get(const std::string& name) {
  auto it = index_.find(name);
  check(it != index_.end(), "no parameter named '", name, "'");
  return *params_[it->second];
}

const Parameter& ParameterStore::get(const std::string& name) const {
  return const_cast<ParameterStore*>(this)->get(name);
}

std::vector<const Parameter*> ParameterStore::all() const {
  std::vector<const Parameter*> out;
  for (auto& p : params_) out.push_back(p.get());
  return out;
}

int64_t ParameterStore::numel() const {
  int64_t n = 0;
  for (auto& p : params_) n += p->value.numel();
  return n;
}

void ParameterStore::prepare_for_inference(bool int8) {
  if (int8)
    quantize_for_inference();
  else
    transpose_for_inference();
}

void ParameterStore::transpose_for_inference() {
  for (Parameter* p : ptrs_)
    if (p->value.shape().rank() == 2 && !p->row_sparse) {
      const int64_t N = p->value.dim(0), K = p->value.dim(1);
      auto t = std::make_shared<Tensor>(Tensor::empty(Shape{K, N}));  // [in, out], all written
      kernels::permute(p->value.data(), p->value.shape(), {1, 0, 2, 3}, t->data(), false);
      p->transposed = std::move(t);
      if (p->argmax_read && kernels::argmax_screen_available())
        p->screen = std::make_shared<const kernels::ArgmaxScreen>(
            kernels::make_argmax_screen(p->value.data(), N, K));
    }
}

void ParameterStore::quantize_for_inference() {
  for (Parameter* p : ptrs_)
    if (p->value.shape().rank() == 2 && !p->row_sparse)
      p->int8 = std::make_shared<const kernels::Int8Matrix>(
          kernels::quantize_matrix(p->value.data(), p->value.shape()[0], p->value.shape()[1]));
}

void ParameterStore::zero_grad() {
  for (auto& p : params_) p->zero_grad();
}

}  // namespace heed
