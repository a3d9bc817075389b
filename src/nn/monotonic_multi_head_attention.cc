// Monotonic multihead attention (see the header): the heads' expectations in training, their
// hard stops in decoding.
// Leaves out: the recursions (kernels/monotonic.cc) and the layer around it (nn/transformer.cc).
#include "heed/nn/monotonic_multi_head_attention.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "heed/autograd/ops.h"
#include "heed/kernels/random.h"
#include "heed/kernels/softmax.h"
#include "heed/nn/attention/attention.h"
#include "heed/util/error.h"

namespace heed {
namespace {

float dot(const float* a, const float* b, int64_t n) {
  float s = 0.f;
  for (int64_t k = 0; k < n; ++k) s += a[k] * b[k];
  return s;
}

// [B, T, h * d_k] -> [B, h, T, d_k]
Var split_heads(Var x, int64_t h) {
  const int64_t B = x.dim(0), T = x.dim(1), dk = x.dim(2) / h;
  return permute(reshape(x, Shape{B, T, h, dk}), {0, 2, 1, 3});
}

}  // namespace

void MonotonicHeadsState::reorder(std::span<const int32_t> from) {
  const std::vector<int32_t> old = stop;
  for (size_t r = 0; r < from.size(); ++r)
    std::copy_n(old.begin() + from[r] * heads, heads,
                stop.begin() + static_cast<int64_t>(r) * heads);
  stop.resize(from.size() * static_cast<size_t>(heads));  // fewer rows: the first ones
}

bool MonotonicHeadsState::ran_off() const {
  return std::any_of(stop.begin(), stop.end(), [](int32_t t) { return t < 0; });
}

MonotonicMultiHeadAttention::MonotonicMultiHeadAttention(int64_t d_model, int64_t heads,
                                                         const MonotonicHeadsConfig& c,
                                                         const Scope& scope, bool follows)
    : d_model_(d_model),
      heads_(heads),
      chunk_(c.chunk),
      stopping_heads_(follows    ? 0
                      : c.shared ? 1
                                 : heads),
      v_at_(follows ? 0 : d_model),
      kc_at_(v_at_ + d_model),
      noise_(c.noise),
      head_drop_(c.head_drop) {
  check(heads >= 1 && d_model % heads == 0, "monotonic multihead attention: d_model ", d_model,
        " is not divisible by ", heads, " heads");
  check(c.chunk >= 0, "monotonic multihead attention: the chunk is ", c.chunk, " (0: none)");
  check(c.noise >= 0.f && std::isfinite(c.noise),
        "monotonic multihead attention: noise must be >= 0");
  check(c.head_drop >= 0.f && c.head_drop < 1.f,
        "monotonic multihead attention: the HeadDrop probability is ", c.head_drop,
        " (0 <= p < 1)");
  check(!follows || c.shared, "monotonic multihead attention: a layer follows the shared policy");
  // K (the stopping energies' keys; none in a layer that follows) | V | K' (MoChA's)
  const int64_t d = d_model, kv = (follows ? 0 : 1) + 1 + (chunk_ > 0 ? 1 : 0);
  if (!follows) {
    W_q_ = &scope.param("W_q", {d, d}, Init::glorot_uniform());
    b_q_ = &scope.param("b_q", {d}, Init::zeros());
  }
  W_kv_ = &scope.param("W_kv", {kv * d, d}, Init::glorot_uniform());
  b_kv_ = &scope.param("b_kv", {kv * d}, Init::zeros());
  if (!follows) r_ = &scope.param("r", {stopping_heads_}, Init::constant(c.bias));
  if (chunk_ > 0) {
    W_qc_ = &scope.param("chunk/W_q", {d, d}, Init::glorot_uniform());
    b_qc_ = &scope.param("chunk/b_q", {d}, Init::zeros());
  }
  W_out_ = &scope.param("W_o", {d, d}, Init::glorot_uniform());
  b_out_ = &scope.param("b_o", {d}, Init::zeros());
}

Var MonotonicMultiHeadAttention::project_memory(Var memory, const Packing& src) const {
  Graph& g = memory.graph();
  return unpack(linear(memory, g.param(*W_kv_), g.param(*b_kv_)), src);  // [B, S, 2d or 3d]
}

Tensor MonotonicMultiHeadAttention::head_drop_mask(Graph& g, int64_t B) const {
  // m_bh ~ Bernoulli(1 - p_HD); the kept heads of row b scaled by h / sum_h' m_bh'   [B, h, 1, 1]
  Tensor m = g.zeros(Shape{B, heads_, 1, 1});
  Rng rng(g.next_stream());
  for (int64_t b = 0; b < B; ++b) {
    float* row = m.data() + b * heads_;
    int64_t kept = 0;
    for (int64_t hh = 0; hh < heads_; ++hh)
      if (rng.uniform() >= head_drop_) {
        row[hh] = 1.f;
        ++kept;
      }
    for (int64_t hh = 0; hh < heads_ && kept > 0; ++hh)
      row[hh] *= static_cast<float>(heads_) / static_cast<float>(kept);
  }
  return m;
}

MonotonicHeadsState MonotonicMultiHeadAttention::make_state(int64_t B) const {
  return {.heads = stopping_heads_,
          .stop = std::vector<int32_t>(static_cast<size_t>(B * stopping_heads_), 0)};
}

Var MonotonicMultiHeadAttention::cross(Var x, const Packing& p, Var memory_kv,
                                       std::span<const int32_t> key_lengths, Var* delays,
                                       Var* policy) const {
  Graph& g = x.graph();
  const int64_t d = d_model_, h = heads_, dk = d / h, hs = stopping_heads_;
  const int64_t B = p.B(), T = p.T, S = memory_kv.dim(1);
  const float scale = 1.f / std::sqrt(static_cast<float>(dk));
  Var v = split_heads(slice(memory_kv, 2, v_at_, d), h);  // [B, h, S, dk]
  // 0 on the source, -inf on its padding
  const Tensor mask = padding_mask(key_lengths, S, g).reshape(Shape{B, 1, 1, S});
  Var w;  // the stopping heads' expected alignments  [B hs, T, S]
  if (follows()) {
    check(policy != nullptr && policy->valid(),
          "monotonic multihead attention: a layer that follows the shared policy needs its "
          "alignment");
    w = *policy;
  } else {
    const int64_t ds = d / hs;  // a stopping head's width
    const float stop_scale = 1.f / std::sqrt(static_cast<float>(ds));
    Var q = split_heads(unpack(linear(x, g.param(*W_q_), g.param(*b_q_)), p), hs);  // [B,hs,T,ds]
    Var k = split_heads(slice(memory_kv, 2, 0, d), hs);                             // [B,hs,S,ds]
    // e^h_ij = q^h_i k^h_j^T / sqrt(d_s) + r_h                                       [B, hs, T, S]
    Var e = matmul(q, k, {.trans_b = true, .alpha = stop_scale}) +
            reshape(g.param(*r_), Shape{1, hs, 1, 1});
    if (g.training() && noise_ > 0.f) {  // eps ~ N(0, sigma^2)
      Tensor eps = g.alloc(Shape{B, hs, T, S});
      Rng rng(g.next_stream());
      const std::span<float> z = eps.span();
      std::generate(z.begin(), z.end(), [&] { return noise_ * rng.normal(); });
      e = e + g.constant(eps);
    }
    Var pstop = sigmoid(e + g.constant(mask));  // p^h_ij, 0 on padding
    // alpha^h_i for every step in turn, alpha^h_{-1} at the first entry
    w = monotonic_alignments(reshape(pstop, Shape{B * hs, T, S}));  // [B hs, T, S]
    if (delays)  // E[d^h_i] of every stopping head and step  [B, hs, T]
      *delays = expected_delays(reshape(w, Shape{B, hs * T, S}), hs, key_lengths, p.lengths);
    if (hs == 1 && policy) *policy = w;  // for the layers that follow
  }
  // the shared policy's alignment, the same for every head   [B, 1, T, S] -> [B, h, T, S]
  if (hs != h) w = g.constant(g.zeros(Shape{B, h, T, S})) + reshape(w, Shape{B, 1, T, S});
  if (chunk_ > 0) {
    // u^h_ij = q'^h_i k'^h_j^T / sqrt(d_k); the expected beta over the w entries ending at a stop
    Var qc = split_heads(unpack(linear(x, g.param(*W_qc_), g.param(*b_qc_)), p), h);
    Var kc = split_heads(slice(memory_kv, 2, kc_at_, d), h);
    Var u = matmul(qc, kc, {.trans_b = true, .alpha = scale}) + g.constant(mask);  // [B, h, T, S]
    w = mocha_chunk(reshape(w, Shape{B * h * T, S}), reshape(u, Shape{B * h * T, S}), chunk_);
  }
  // head_h = sum_j w^h_ij v^h_j, the heads side by side again: [B, T, d]
  Var out = matmul(reshape(w, Shape{B, h, T, S}), v);  // [B, h, T, dk]
  if (g.training() && head_drop_ > 0.f) out = out * g.constant(head_drop_mask(g, B));
  out = reshape(permute(out, {0, 2, 1, 3}), Shape{B, T, d});
  return linear(pack(out, p), g.param(*W_out_), g.param(*b_out_));  // [N_q, d]
}

Var MonotonicMultiHeadAttention::step(Var x, Var memory_kv, std::span<const int32_t> key_lengths,
                                      MonotonicHeadsState& st, Tensor* weights) const {
  Graph& g = x.graph();
  check(!g.training(), "monotonic multihead attention: hard decoding is for inference graphs");
  const int64_t d = d_model_, h = heads_, dk = d / h;
  const int64_t B = x.dim(0), S = memory_kv.dim(1), cols = memory_kv.dim(2);
  // a layer that follows reads the shared policy's state (one stop per row)
  const int64_t hs = follows() ? 1 : stopping_heads_;
  check(static_cast<int64_t>(st.stop.size()) == B * hs,
        "monotonic multihead attention: a state of ", st.stop.size(), " heads for ", B, " rows of ",
        hs);
  const float scale = 1.f / std::sqrt(static_cast<float>(dk));
  const float* m = memory_kv.value().data();  // [B, S, K | V (| K')], or [B, S, V (| K')]
  if (!follows()) {
    // each stopping head from its last stop to the first j with e^h_ij >= 0 (p^h_ij >= 0.5);
    // -1: off the end (since an earlier step or now)
    const int64_t ds = d / hs;
    const float stop_scale = 1.f / std::sqrt(static_cast<float>(ds));
    const Tensor q = linear(x, g.param(*W_q_), g.param(*b_q_)).value();  // [B, d]
    const float* r = r_->value.data();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t hh = 0; hh < hs; ++hh) {
        int32_t& stop = st.stop[b * hs + hh];
        if (stop < 0) continue;
        const float* qh = q.data() + b * d + hh * ds;
        int64_t t = stop;
        const int64_t len = key_lengths[b];
        while (t < len && stop_scale * dot(qh, m + (b * S + t) * cols + hh * ds, ds) + r[hh] < 0.f)
          ++t;
        stop = t >= len ? -1 : static_cast<int32_t>(t);
      }
  }
  Tensor qc;
  if (chunk_ > 0) qc = linear(x, g.param(*W_qc_), g.param(*b_qc_)).value();  // [B, d]
  Tensor context = g.zeros(Shape{B, d});
  if (weights) *weights = g.zeros(Shape{B, h, 1, S});
  std::vector<float> u;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t hh = 0; hh < h; ++hh) {
      // the head's stop, or the shared policy's
      const int64_t t = st.stop[b * hs + (hs == h ? hh : 0)];
      if (t < 0) continue;  // off the end: the head attends to nothing
      // what the head attends to: its stop, or softmax(u) over the chunk [t - w + 1, t]
      const int64_t from = chunk_ > 0 ? std::max<int64_t>(0, t - chunk_ + 1) : t;
      u.assign(static_cast<size_t>(t - from + 1), 1.f);
      if (chunk_ > 0) {
        const float* qch = qc.data() + b * d + hh * dk;
        for (int64_t j = from; j <= t; ++j)
          u[j - from] = scale * dot(qch, m + (b * S + j) * cols + kc_at_ + hh * dk, dk);
        kernels::softmax_forward(u.data(), {}, u.data(), Shape{1, t - from + 1}, false);
      }
      float* c = context.data() + b * d + hh * dk;
      for (int64_t j = from; j <= t; ++j) {
        const float* vj = m + (b * S + j) * cols + v_at_ + hh * dk;
        for (int64_t k = 0; k < dk; ++k) c[k] += u[j - from] * vj[k];
        if (weights) weights->data()[(b * h + hh) * S + j] = u[j - from];
      }
    }
  return linear(g.constant(context), g.param(*W_out_), g.param(*b_out_));  // [B, d]
}

}  // namespace heed
