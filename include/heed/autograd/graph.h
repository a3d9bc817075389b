// The define-by-run graph: every op called on Vars appends a node (its value, and a closure
// that computes its inputs' gradients); backward() runs the closures in reverse order.
// Values, gradients, saved activations and closures all live in the graph's Arena, so a step
// allocates nothing once the arena has grown to the step's size. Built per batch, cleared after.
// Leaves out: graph optimisation and higher-order gradients.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <new>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "heed/autograd/parameter.h"
#include "heed/kernels/bf16.h"
#include "heed/tensor/arena.h"
#include "heed/util/names.h"

namespace heed {

class Graph;

// A handle to a node of a graph: cheap to copy, valid until the graph is cleared.
class Var {
 public:
  Var() = default;
  Var(Graph* g, int32_t id) : graph_(g), id_(id) {}

  const Tensor& value() const;
  const Shape& shape() const { return value().shape(); }
  int64_t dim(int axis) const { return shape().dim(axis); }
  bool requires_grad() const;
  // The gradient accumulator, zero-filled on first use (for a parameter: its .grad).
  Tensor& grad() const;
  // For a backward that writes the *whole* gradient in one pass (a GEMM's C = A B + beta C, an
  // element-wise kernel's dx = f or dx += f): the gradient memory and the beta to use. beta is
  // 0 for the first contribution, whose memory is left uninitialised instead of being
  // zero-filled and then read back; 1 afterwards (and always for a parameter's gradient).
  struct GradTarget {
    float* data;
    float beta;
    bool accumulate() const { return beta != 0.f; }
  };
  GradTarget grad_target() const;
  // For a backward whose gradient for this input is dy itself (add, reshape): takes dy's memory
  // as the gradient, without a copy, when this is its first contribution and not a parameter's;
  // returns false (nothing done) otherwise. dy must not be read again once another contribution
  // may have been added to it: backward visits a node after every node that uses it, so its own
  // incoming gradient is final and unread once its closure returns.
  bool adopt_grad(const Tensor& dy) const;
  bool has_grad() const;
  Parameter* param() const;  // the parameter behind a param() leaf, else nullptr
  Graph& graph() const { return *graph_; }
  int32_t id() const { return id_; }
  bool valid() const { return graph_ != nullptr; }

 private:
  Graph* graph_ = nullptr;
  int32_t id_ = -1;
};

enum class Mode {
  Train,      // records backward closures, dropout active
  Inference,  // records no closures, dropout is the identity
};

// The operands of linear()'s products (x W^T and both its gradients): fp32, or rounded to bf16
// with fp32 sums (mixed-precision training, kernels/bf16.h). Other ops always compute in fp32.
enum class Precision { fp32, bf16 };
std::span<const Named<Precision>> names(Precision);  // "float32" | "bfloat16"
Precision parse_precision(const std::string& name);  // an Error lists the names

class Graph {
 public:
  explicit Graph(Mode mode = Mode::Train, uint64_t seed = 0x5eed);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Leaves.
  Var constant(const Tensor& t);                                 // no gradient, shares t's storage
  Var input(const Shape& shape, std::span<const float> values);  // copied into the arena
  Var variable(const Tensor& t);                                 // a leaf that wants its gradient
  Var param(Parameter& p);                                       // gradient accumulates into p.grad

  // Appends a node. `backward(dy)` is stored only when some input requires a gradient; it
  // must accumulate (+=) into the inputs' grad(). Called by ops, not by models.
  template <class F>
  Var make(Tensor value, std::span<const Var> inputs, F&& backward);
  template <class F>
  Var make(Tensor value, std::initializer_list<Var> inputs, F&& backward) {
    return make(std::move(value), std::span<const Var>(inputs.begin(), inputs.size()),
                std::forward<F>(backward));
  }

  // Arena memory for op values and saved state.
  Tensor alloc(const Shape& shape) { return arena_.tensor(shape); }
  Tensor zeros(const Shape& shape) { return arena_.zeros(shape); }
  template <class T>
  std::span<T> copy(std::span<const T> src);

  // Seeds d loss / d loss = 1 (loss must have one element) and runs every closure in reverse.
  void backward(Var loss);
  // Backward from any node with a given dL/d(out) (same shape), like PyTorch's y.backward(g).
  void backward(Var out, const Tensor& seed);
  // Frees all nodes and arena memory (keeping it for the next step).
  void clear();
  // Decoding in bounded memory (inference graphs only): take mark() once the source is
  // encoded; after each decoder step, rewind(mark, {&state...}) frees every node and block made
  // since the mark except the values of `keep`, which come back as new leaves (the Vars are
  // updated in place). Each step then reuses the previous step's cache-warm memory instead of
  // touching fresh pages. Vars made after the mark and not kept are invalid afterwards.
  struct Mark {
    size_t nodes = 0;
    Arena::Mark arena;
  };
  Mark mark() const { return {nodes_.size(), arena_.mark()}; }
  void rewind(const Mark& m, std::span<Var* const> keep);
  void rewind(const Mark& m, std::initializer_list<Var*> keep) {
    rewind(m, std::span<Var* const>(keep.begin(), keep.size()));
  }

  Mode mode() const { return mode_; }
  void set_precision(Precision p) { precision_ = p; }
  Precision precision() const { return precision_; }
  bool training() const { return mode_ == Mode::Train; }
  // A fresh stream id for a random op (dropout), derived from the seed and a counter.
  uint64_t next_stream();
  void reseed(uint64_t seed) {
    seed_ = seed;
    streams_ = 0;
  }
  size_t size() const { return nodes_.size(); }
  Arena& arena() { return arena_; }

  // Mixed precision: p's value rounded to bf16 [rows, last], made at the first request in this
  // graph and kept until clear() or rewind(), so that a weight read at every time step of an RNN
  // is converted once a training step instead of once a use. p must not change meanwhile (the
  // optimizer updates it after the backward, before the next step's clear()).
  const kernels::bf16* bf16_value(const Parameter& p);
  // p's value [N, K] transposed, W^T [K, N], made and kept the same way: a product x W^T of a
  // few rows (an RNN's step, 16 rows for 2048 x 640) runs 2-3x faster on W^T stored than on W,
  // which oneDNN's sgemm repacks at every call (measured on Zen 4).
  const float* transposed_value(const Parameter& p);
  // The weight gradient of a product of few rows (an RNN's step), dW [N, K] += dy^T [N, M]
  // x [M, K], put off to the end of backward(), where each dW's pieces become one product over
  // all their rows: K = the sum of the M's instead of a product of 16 rows at every step, each
  // reading and writing all of dW. dy [M, N] and x [M, K] (rows dense) must not change until
  // then: this graph's values and gradients do not (a node's gradient is final once its
  // backward has run).
  void defer_weight_gradient(float* dW, int64_t N, int64_t K, const float* dy, const float* x,
                             int64_t M);

 private:
  friend class Var;
  struct Backward {
    void (*call)(void* fn, const Tensor& dy) = nullptr;
    void (*destroy)(void* fn) = nullptr;
    void* fn = nullptr;
  };
  struct Node {
    Tensor value;
    Tensor grad;  // undefined until the first accumulation
    Parameter* param = nullptr;
    bool requires_grad = false;
    Backward backward;
  };
  Var push(Tensor value, bool requires_grad, Parameter* param = nullptr);

  Mode mode_;
  Precision precision_ = Precision::fp32;
  uint64_t seed_;
  uint64_t streams_ = 0;
  Arena arena_;
  std::vector<Node> nodes_;
  std::vector<float> kept_;         // rewind(): the kept values while their memory is freed
  std::vector<Shape> kept_shapes_;  // and their shapes
  std::vector<std::pair<const Parameter*, const kernels::bf16*>> bf16_values_;  // in the arena
  std::vector<std::pair<const Parameter*, const float*>> transposed_values_;    // in the arena
  struct DeferredPiece {
    const float* dy;
    const float* x;
    int64_t rows;
  };
  struct DeferredGradient {
    float* dW;
    int64_t N, K;
    std::vector<DeferredPiece> pieces;
  };
  // defer_weight_gradient's pieces, until backward() ends; the entries (one per dW seen) and
  // their capacity are kept, so that a warm training step allocates nothing
  std::vector<DeferredGradient> deferred_;
  void flush_weight_gradients();
};

template <class F>
Var Graph::make(Tensor value, std::span<const Var> inputs, F&& backward) {
  bool rg = false;
  if (mode_ == Mode::Train)
    for (const Var& v : inputs) rg = rg || v.requires_grad();
  Var out = push(std::move(value), rg);
  if (rg) {
    using Fn = std::decay_t<F>;
    void* mem =
        arena_.allocate(sizeof(Fn), alignof(Fn) > Arena::kAlign ? alignof(Fn) : Arena::kAlign);
    Backward& b = nodes_[out.id()].backward;
    b.fn = new (mem) Fn(std::forward<F>(backward));
    b.call = [](void* fn, const Tensor& dy) { (*static_cast<Fn*>(fn))(dy); };
    b.destroy = [](void* fn) { static_cast<Fn*>(fn)->~Fn(); };
  }
  return out;
}

template <class T>
std::span<T> Graph::copy(std::span<const T> src) {
  T* p = arena_.array<T>(src.size());
  std::copy(src.begin(), src.end(), p);
  return {p, src.size()};
}

}  // namespace heed
