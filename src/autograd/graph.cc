// Graph: node storage, leaves, and the reverse sweep.
// Leaves out: the ops themselves (autograd/ops/).
#include "heed/autograd/graph.h"

#include <algorithm>

#include "heed/kernels/elementwise.h"
#include "heed/kernels/gemm.h"
#include "heed/kernels/layout.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/random.h"
#include "heed/util/error.h"

namespace heed {

const Tensor& Var::value() const {
  // a handle made after a rewind() mark and not kept is stale: say so instead of reading garbage
  check(static_cast<size_t>(id_) < graph_->nodes_.size(), "Var ", id_,
        " is no longer in its graph (cleared or rewound past)");
  return graph_->nodes_[id_].value;
}

bool Var::requires_grad() const {
  return graph_->nodes_[id_].requires_grad;
}

Var::GradTarget Var::grad_target() const {
  auto& n = graph_->nodes_[id_];
  if (n.grad.data() || n.param) return {grad().data(), 1.f};
  n.grad = graph_->arena_.tensor(n.value.shape());
  return {n.grad.data(), 0.f};
}

bool Var::adopt_grad(const Tensor& dy) const {
  auto& n = graph_->nodes_[id_];
  if (n.grad.data() || n.param) return false;
  n.grad = dy.reshape(n.value.shape());  // a view of dy's memory
  return true;
}

Parameter* Var::param() const {
  return graph_->nodes_[id_].param;
}

bool Var::has_grad() const {
  return graph_->nodes_[id_].grad.data() != nullptr;
}

Tensor& Var::grad() const {
  auto& n = graph_->nodes_[id_];
  if (!n.grad.data()) n.grad = n.param ? n.param->grad : graph_->arena_.zeros(n.value.shape());
  return n.grad;
}

std::span<const Named<Precision>> names(Precision) {
  static constexpr Named<Precision> kNames[] = {{Precision::fp32, "float32"},
                                                {Precision::bf16, "bfloat16"}};
  return kNames;
}

Precision parse_precision(const std::string& name) {
  return parse_name<Precision>(name, "precision");
}

Graph::Graph(Mode mode, uint64_t seed) : mode_(mode), seed_(seed) {
  adopt_threads();  // this thread computes the graph: with --threads, whichever thread it is
  nodes_.reserve(1024);
}

Graph::~Graph() {
  clear();
}

Var Graph::push(Tensor value, bool requires_grad, Parameter* param) {
  Node n;
  n.value = std::move(value);
  n.requires_grad = requires_grad;
  n.param = param;
  nodes_.push_back(std::move(n));
  return Var(this, static_cast<int32_t>(nodes_.size() - 1));
}

Var Graph::constant(const Tensor& t) {
  return push(t, false);
}

Var Graph::input(const Shape& shape, std::span<const float> values) {
  check(static_cast<int64_t>(values.size()) == shape.numel(), "Graph::input: ", values.size(),
        " values for shape ", shape);
  Tensor t = arena_.tensor(shape);
  std::copy(values.begin(), values.end(), t.data());
  return push(t, false);
}

Var Graph::variable(const Tensor& t) {
  return push(t, mode_ == Mode::Train);
}

Var Graph::param(Parameter& p) {
  return push(p.value, mode_ == Mode::Train, &p);
}

void Graph::backward(Var loss) {
  check(loss.valid(), "backward: the loss is an empty Var");
  check(loss.value().numel() == 1, "backward: the loss must be a scalar, not ", loss.shape());
  Tensor one = arena_.tensor(loss.shape());  // the seed dL/dL = 1, in the arena: no malloc
  one.data()[0] = 1.f;
  backward(loss, one);
}

void Graph::backward(Var out, const Tensor& seed) {
  check(out.valid() && &out.graph() == this, "backward: the output is not a node of this graph");
  check(seed.shape() == out.shape(), "backward: seed gradient ", seed.shape(),
        " for an output of shape ", out.shape());
  check(mode_ == Mode::Train, "backward: this graph was built in inference mode");
  if (!out.requires_grad()) return;  // nothing to differentiate
  Node& top = nodes_[out.id()];
  if (!top.grad.data() && !top.param) {  // a fresh gradient: copy the seed, skip zero-filling
    top.grad = arena_.tensor(seed.shape());
    kernels::copy(seed.data(), top.grad.data(), seed.numel());
  } else {
    kernels::axpy(1.f, seed.data(), out.grad().data(), seed.numel());
  }
  for (int32_t i = out.id(); i >= 0; --i) {
    Node& n = nodes_[i];
    if (n.backward.call && n.grad.data()) n.backward.call(n.backward.fn, n.grad);
  }
  flush_weight_gradients();
}

void Graph::defer_weight_gradient(float* dW, int64_t N, int64_t K, const float* dy, const float* x,
                                  int64_t M) {
  if (M <= 0) return;
  auto it = std::find_if(deferred_.begin(), deferred_.end(),
                         [&](const DeferredGradient& d) { return d.dW == dW; });
  if (it == deferred_.end()) {
    deferred_.push_back({dW, N, K, {}});
    it = deferred_.end() - 1;
  } else if (it->pieces.empty()) {  // an entry kept from an earlier backward (graph.h)
    it->N = N;
    it->K = K;
  }
  check(it->N == N && it->K == K, "defer_weight_gradient: ", N, " x ", K, " for a gradient of ",
        it->N, " x ", it->K);
  it->pieces.push_back({dy, x, M});
}

// dW += Y^T X with Y [R, N], X [R, K] the pieces' rows one after another (copied together)
void Graph::flush_weight_gradients() {
  for (DeferredGradient& d : deferred_) {
    if (d.pieces.empty()) continue;
    int64_t R = 0;
    for (const DeferredPiece& p : d.pieces) R += p.rows;
    float* Y = arena_.array<float>(static_cast<size_t>(R * d.N));
    float* X = arena_.array<float>(static_cast<size_t>(R * d.K));
    int64_t r = 0;
    for (const DeferredPiece& p : d.pieces) {
      kernels::copy(p.dy, Y + r * d.N, p.rows * d.N);
      kernels::copy(p.x, X + r * d.K, p.rows * d.K);
      r += p.rows;
    }
    kernels::gemm(true, false, d.N, d.K, R, 1.f, Y, d.N, X, d.K, 1.f, d.dW, d.K);
    d.pieces.clear();  // the entry and its capacity stay: a warm step allocates nothing
  }
}

void Graph::clear() {
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it)
    if (it->backward.destroy) it->backward.destroy(it->backward.fn);
  nodes_.clear();
  arena_.reset();
  bf16_values_.clear();
  transposed_values_.clear();
  for (DeferredGradient& d : deferred_) d.pieces.clear();  // a backward that threw
}

const kernels::bf16* Graph::bf16_value(const Parameter& p) {
  for (const auto& [q, b] : bf16_values_)  // a few dozen weights: a scan
    if (q == &p) return b;
  const Tensor& v = p.value;
  auto* b = arena_.array<kernels::bf16>(static_cast<size_t>(v.numel()));
  kernels::to_bf16(v.data(), v.shape().rows(), v.shape().last(), v.shape().last(), b);
  bf16_values_.emplace_back(&p, b);
  return b;
}

const float* Graph::transposed_value(const Parameter& p) {
  for (const auto& [q, t] : transposed_values_)
    if (q == &p) return t;
  const Tensor& v = p.value;
  check(v.shape().rank() == 2, "Graph::transposed_value: ", p.name, " is ", v.shape(),
        ", not a matrix");
  float* t = arena_.array<float>(static_cast<size_t>(v.numel()));
  kernels::permute(v.data(), v.shape(), {1, 0, 2, 3}, t, false);
  transposed_values_.emplace_back(&p, t);
  return t;
}

void Graph::rewind(const Mark& m, std::span<Var* const> keep) {
  check(mode_ == Mode::Inference, "Graph::rewind: only inference graphs can be rewound");
  check(m.nodes <= nodes_.size(), "Graph::rewind: the mark is ahead of the graph");
  auto made_after = [&](const Var* v) {  // by id only: valid before and after the rewind
    if (!v->valid()) return false;
    check(&v->graph() == this, "Graph::rewind: a kept Var belongs to another graph");
    return static_cast<size_t>(v->id()) >= m.nodes;
  };
  kept_.clear();  // keeps its capacity: after the first step no allocation
  kept_shapes_.clear();
  for (const Var* v : keep)
    if (made_after(v)) {
      kept_shapes_.push_back(v->shape());
      kept_.insert(kept_.end(), v->value().span().begin(), v->value().span().end());
    }
  nodes_.resize(m.nodes);  // inference nodes hold no closures
  arena_.rewind(m.arena);
  bf16_values_.clear();  // some may lie in the memory just freed
  transposed_values_.clear();
  const float* p = kept_.data();
  size_t i = 0;
  for (Var* v : keep)
    if (made_after(v)) {
      const Shape& shape = kept_shapes_[i++];
      *v = input(shape, {p, static_cast<size_t>(shape.numel())});
      p += shape.numel();
    }
}

uint64_t Graph::next_stream() {
  return mix64(seed_ ^ mix64(++streams_));
}

}  // namespace heed
