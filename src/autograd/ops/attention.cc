// The fused attention op: checks shapes, describes where the heads live, and calls the kernels.
// Leaves out: the arithmetic (kernels/attention.cc).
#include "heed/autograd/ops/attention.h"

#include <cmath>

#include "heed/kernels/attention.h"
#include "heed/util/error.h"

namespace heed {
namespace {

using kernels::HeadsView;

// Where the heads of a [B, T, width] tensor live, from the first column of one operand.
HeadsView heads_of(const Shape& s, int64_t d) {
  return {s.dim(1) * s.dim(2), d, s.dim(2)};
}

struct Prepared {
  kernels::AttentionDims dims;
  kernels::AttentionMask mask;
  float scale;
};

Prepared prepare(Graph& G, int64_t B, int64_t Tq, int64_t Tk, int64_t width,
                 const SdpaOptions& opts) {
  check(opts.heads >= 1 && width % opts.heads == 0, "attention: width ", width,
        " is not divisible into ", opts.heads, " heads");
  const int64_t D = width / opts.heads;
  Prepared p;
  p.dims = {B, opts.heads, Tq, Tk, D};
  p.scale = opts.scale > 0.f ? opts.scale : 1.f / std::sqrt(static_cast<float>(D));
  if (!opts.key_lengths.empty()) {
    check(static_cast<int64_t>(opts.key_lengths.size()) == B,
          "attention: ", opts.key_lengths.size(), " key lengths for a batch of ", B);
    for (int32_t len : opts.key_lengths)
      check(len >= 0 && len <= Tk, "attention: key length ", len, " outside [0, ", Tk, "]");
    p.mask.key_lengths = G.copy(opts.key_lengths).data();  // lives as long as the graph step
  }
  p.mask.causal = opts.causal;
  p.mask.causal_offset = opts.causal_offset.value_or(Tk - Tq);
  if (opts.chunk > 0) {
    check(!opts.causal && Tq == Tk && opts.left >= 0 && opts.right >= 0,
          "attention: a chunked mask is self-attention's (T_q ", Tq, ", T_k ", Tk,
          "), not causal too, with left ", opts.left, " and right ", opts.right, " >= 0");
    p.mask.chunk = opts.chunk;
    p.mask.left = opts.left;
    p.mask.right = opts.right;
  }
  return p;
}

// Where the heads of packed rows [N, C] of the sequences of p live: each entry's first row in
// the graph's arena (the prefix sums of the lengths).
HeadsView packed_heads_of(Graph& G, int64_t C, int64_t d, const Packing& p) {
  auto* starts = G.arena().array<int64_t>(static_cast<size_t>(p.B()));
  int64_t row = 0;
  for (int64_t b = 0; b < p.B(); ++b) {
    starts[b] = row;
    row += p.lengths[b];
  }
  return {0, d, C, starts};
}

// One op for every form: Q, K, V are read from (possibly the same) tensors at column offsets,
// padded [B, T, C]; or, with `packed`, the queries are the packed rows [N, C] of its sequences
// (the output then too), and with `keys_packed` the keys and values as well (self-attention).
Var sdpa(Var q_src, int64_t q_col, Var k_src, int64_t k_col, Var v_src, int64_t v_col,
         int64_t width, std::initializer_list<Var> inputs, const SdpaOptions& opts,
         const Packing* packed = nullptr, bool keys_packed = false) {
  Graph& G = q_src.graph();
  const int64_t B = packed ? packed->B() : q_src.dim(0), Tq = packed ? packed->T : q_src.dim(1);
  const int64_t Tk = keys_packed ? packed->T : k_src.dim(1);
  SdpaOptions o_opts = opts;
  if (keys_packed) o_opts.key_lengths = packed->lengths;  // keys past a length do not exist
  Prepared p = prepare(G, B, Tq, Tk, width, o_opts);
  check(opts.keys_transposed == nullptr || !G.training(),
        "attention: keys transposed ahead are for inference graphs");
  if (packed)
    p.mask.query_lengths = keys_packed ? p.mask.key_lengths : G.copy(packed->lengths).data();
  const int64_t D = p.dims.D;
  const HeadsView q =
      packed ? packed_heads_of(G, q_src.dim(1), D, *packed) : heads_of(q_src.shape(), D);
  auto packed_view = [&](int64_t C) { return HeadsView{0, D, C, q.starts}; };  // rows as q's
  const HeadsView k = keys_packed ? packed_view(k_src.dim(1)) : heads_of(k_src.shape(), D),
                  v = keys_packed ? packed_view(v_src.dim(1)) : heads_of(v_src.shape(), D);
  Tensor out = G.alloc(packed ? Shape{packed->N, width} : Shape{B, Tq, width});  // [N | B, Tq, h*d]
  Tensor lse = G.alloc(Shape{B, opts.heads, Tq});
  const HeadsView o = packed ? packed_view(width) : heads_of(out.shape(), D);
  const float *Q = q_src.value().data() + q_col, *K = k_src.value().data() + k_col,
              *V = v_src.value().data() + v_col;
  kernels::attention_forward(Q, q, K, k, V, v, out.data(), o, lse.data(), p.dims, p.mask, p.scale,
                             opts.keys_transposed);
  // The kernel accumulates dQ and dK/dV from different threads: when q is the very operand k or
  // v is (attention(x, x, x)), dQ goes through a buffer of its own, added afterwards.
  const bool q_aliased =
      (q_src.id() == k_src.id() && q_col == k_col) || (q_src.id() == v_src.id() && q_col == v_col);
  return G.make(out, inputs, [=](const Tensor& dy) {
    // With one qkv tensor (self_attention) the three gradients are its column blocks.
    float* dK = k_src.grad().data() + k_col;
    float* dV = v_src.grad().data() + v_col;
    if (!q_aliased) {
      float* dQ = q_src.grad().data() + q_col;
      kernels::attention_backward(Q, q, K, k, V, v, out.data(), o, dy.data(), o, lse.data(), dQ, q,
                                  dK, k, dV, v, p.dims, p.mask, p.scale);
      return;
    }
    Tensor dq_own = q_src.graph().zeros(out.shape());  // laid out as the output
    kernels::attention_backward(Q, q, K, k, V, v, out.data(), o, dy.data(), o, lse.data(),
                                dq_own.data(), o, dK, k, dV, v, p.dims, p.mask, p.scale);
    float* dQ = q_src.grad().data() + q_col;
    for (int64_t r = 0; r < out.shape().rows(); ++r)  // rows of q and of out correspond
      for (int64_t c = 0; c < width; ++c) dQ[r * q.row + c] += dq_own.data()[r * width + c];
  });
}

}  // namespace

Var scaled_dot_product_attention(Var q, Var k, Var v, const SdpaOptions& opts) {
  check(q.shape().rank() == 3 && k.shape().rank() == 3 && v.shape() == k.shape() &&
            q.dim(0) == k.dim(0) && q.dim(2) == k.dim(2),
        "attention: q ", q.shape(), ", k ", k.shape(), ", v ", v.shape(),
        " (expected [B, Tq, h*d], [B, Tk, h*d], [B, Tk, h*d])");
  return sdpa(q, 0, k, 0, v, 0, q.dim(2), {q, k, v}, opts);
}

Var self_attention(Var qkv, const SdpaOptions& opts) {
  check(qkv.shape().rank() == 3 && qkv.dim(2) % 3 == 0, "self_attention: qkv ", qkv.shape(),
        " (expected [B, T, 3*h*d])");
  const int64_t width = qkv.dim(2) / 3;
  return sdpa(qkv, 0, qkv, width, qkv, 2 * width, width, {qkv}, opts);
}

Var cross_attention(Var q, Var kv, const SdpaOptions& opts) {
  check(q.shape().rank() == 3 && kv.shape().rank() == 3 && q.dim(0) == kv.dim(0) &&
            kv.dim(2) == 2 * q.dim(2),
        "cross_attention: q ", q.shape(), ", kv ", kv.shape(),
        " (expected [B, Tq, h*d] and [B, Tk, 2*h*d])");
  const int64_t width = q.dim(2);
  return sdpa(q, 0, kv, 0, kv, width, width, {q, kv}, opts);
}

Var self_attention(Var qkv, const Packing& p, const SdpaOptions& opts) {
  check(qkv.shape().rank() == 2 && qkv.dim(0) == p.N && qkv.dim(1) % 3 == 0, "self_attention: qkv ",
        qkv.shape(), " (expected [", p.N, ", 3*h*d]: the packed rows)");
  const int64_t width = qkv.dim(1) / 3;
  return sdpa(qkv, 0, qkv, width, qkv, 2 * width, width, {qkv}, opts, &p, /*keys_packed=*/true);
}

Var cross_attention(Var q, const Packing& p, Var kv, const SdpaOptions& opts) {
  check(q.shape().rank() == 2 && q.dim(0) == p.N && kv.shape().rank() == 3 && kv.dim(0) == p.B() &&
            kv.dim(2) == 2 * q.dim(1),
        "cross_attention: q ", q.shape(), ", kv ", kv.shape(), " (expected [", p.N,
        ", h*d]: the packed rows of ", p.B(), " sequences, and [", p.B(), ", Tk, 2*h*d])");
  const int64_t width = q.dim(1);
  return sdpa(q, 0, kv, 0, kv, width, width, {q, kv}, opts, &p);
}

Tensor attention_weights(Var q, Var k, const SdpaOptions& opts) {
  Graph& G = q.graph();
  const int64_t B = q.dim(0), Tq = q.dim(1), Tk = k.dim(1);
  const Prepared p = prepare(G, B, Tq, Tk, q.dim(2), opts);
  Tensor w = G.alloc(Shape{B, opts.heads, Tq, Tk});
  kernels::attention_weights(q.value().data(), heads_of(q.shape(), p.dims.D), k.value().data(),
                             heads_of(k.shape(), p.dims.D), w.data(), p.dims, p.mask, p.scale);
  return w;
}

}  // namespace heed
