// Parameter: a named, trainable tensor with its gradient, and the ParameterStore that owns all
// parameters of a model under hierarchical names ("encoder/layer_0/gru/U").
// Leaves out: initialisation (nn/init.h) and updates (train/optimizer.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "heed/kernels/argmax_screen.h"
#include "heed/kernels/quantize.h"
#include "heed/tensor/tensor.h"

namespace heed {

struct Parameter {
  std::string name;  // hierarchical, '/'-separated
  Tensor value;      // owned storage
  Tensor grad;       // same shape; accumulated by backward, cleared by zero_grad

  // Row-sparse gradients (embedding tables): when set, only the rows listed in `touched` hold
  // a non-zero gradient, so clearing and norms cost O(rows touched), not O(V).
  bool row_sparse = false;
  std::vector<int32_t> touched;
  std::vector<uint8_t> is_touched;  // [rows]

  // > 0: after each optimizer step a row whose L2 norm exceeds this is rescaled to it (the
  // max-norm constraint of Hinton et al. 2012 and Kim 2014 on the output layer's weight vectors).
  float max_row_norm = 0.f;

  // Copies for decoding (ParameterStore::prepare_for_inference); when one is set, inference
  // graphs multiply by it in linear() and the fused RNN cells. Training never reads them.
  std::shared_ptr<const kernels::Int8Matrix> int8;  // int8, quantised per row
  std::shared_ptr<const Tensor> transposed;         // fp32: W^T [in, out]
  // An output layer a greedy search reads for its argmax (set by the model): fp32 decoding also
  // gives it an int8 screen (kernels/argmax_screen.h), where this CPU has heed's int8 kernel.
  bool argmax_read = false;
  std::shared_ptr<const kernels::ArgmaxScreen> screen;
  void mark_rows(std::span<const int32_t> rows);
  void zero_grad();
  double grad_sum_squares() const;
};

class ParameterStore {
 public:
  // Adds a zero-initialised parameter; a duplicate name is an error.
  Parameter& add(const std::string& name, const Shape& shape, bool row_sparse = false);
  Parameter& get(const std::string& name);
  const Parameter& get(const std::string& name) const;
  bool contains(const std::string& name) const { return index_.count(name) > 0; }

  // In creation order, so that saving, loading and optimiser state line up. The mutable view
  // is kept, not built per call: optimisers walk it every step without allocating.
  const std::vector<Parameter*>& all() { return ptrs_; }
  std::vector<const Parameter*> all() const;
  size_t size() const { return params_.size(); }
  int64_t numel() const;
  void zero_grad();
  // Decoding: gives every weight matrix (rank 2, not an embedding table) a copy that
  // inference-mode products use instead of it. Call once the weights are final.
  //   int8: quantised per row (kernels/quantize.h);
  //   fp32: its transpose W^T [in, out]. oneDNN's sgemm repacks a transposed B at every call,
  //   which costs as much as the product at a decoding step's 8-32 rows (x W^T for W [7859, 128]:
  //   2x the time of x W^T with W^T stored, measured on a Xeon, family 6 model 207); and an
  //   output layer marked argmax_read its int8 screen.
  void prepare_for_inference(bool int8);
  void quantize_for_inference();
  void transpose_for_inference();

 private:
  std::vector<std::unique_ptr<Parameter>> params_;
  std::vector<Parameter*> ptrs_;  // params_ as raw pointers
  std::map<std::string, size_t> index_;
};

}  // namespace heed
