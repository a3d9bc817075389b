// The fused scaled dot-product attention against its oracle, the naive composition
// matmul -> masked softmax -> matmul (values and gradients, padding and causal masks, sizes
// that do not fill a tile, one and two threads, the fused Q|K|V form), plus: causal masking
// leaks nothing from the future, the weights are the oracle's softmax, and the graph never
// holds a T x T matrix.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "heed/kernels/attention.h"
#include "heed/kernels/parallel.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

struct Case {
  int64_t B, H, Tq, Tk, D;
  bool causal;
  std::vector<int32_t> lengths;            // empty: no padding
  int64_t chunk = 0, left = 0, right = 0;  // chunked self-attention's window (0: none)
};

// softmax(Q K^T / sqrt(d) + M) V from basic ops; M [B, 1, Tq, Tk] holds 0 / -inf.
Var naive_attention(Var q, Var k, Var v, const Case& c) {
  Graph& g = q.graph();
  auto heads = [&](Var x, int64_t T) {  // [B, T, H*D] -> [B, H, T, D]
    return permute(reshape(x, Shape{c.B, T, c.H, c.D}), {0, 2, 1, 3});
  };
  Tensor mask = g.zeros(Shape{c.B, 1, c.Tq, c.Tk});
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t i = 0; i < c.Tq; ++i)
      for (int64_t j = 0; j < c.Tk; ++j) {
        bool padded = !c.lengths.empty() && j >= c.lengths[b];
        bool future = c.causal && j > i + (c.Tk - c.Tq);
        if (c.chunk > 0) {  // outside c C - L <= j < (c + 1) C + R
          const int64_t start = i / c.chunk * c.chunk;
          future = j >= start + c.chunk + c.right || j < start - c.left;
        }
        if (padded || future)
          mask.data()[(b * c.Tq + i) * c.Tk + j] = -std::numeric_limits<float>::infinity();
      }
  Var s = matmul(heads(q, c.Tq), heads(k, c.Tk),
                 {.trans_b = true, .alpha = 1.f / std::sqrt(static_cast<float>(c.D))});
  Var o = matmul(softmax(s, mask), heads(v, c.Tk));  // [B, H, Tq, D]
  return reshape(permute(o, {0, 2, 1, 3}), Shape{c.B, c.Tq, c.H * c.D});
}

SdpaOptions options(const Case& c) {
  return {.heads = c.H,
          .causal = c.causal,
          .key_lengths = c.lengths,
          .chunk = c.chunk,
          .left = c.left,
          .right = c.right};
}

struct Result {
  Tensor out, dq, dk, dv;
};

// out and the gradients of sum(w * out) with respect to q, k, v.
template <class F>
Result run(const Case& c, F&& attend, uint64_t seed) {
  Rng rng(seed);
  Graph g;
  Var q = g.variable(testing::random_tensor({c.B, c.Tq, c.H * c.D}, rng, -2.f, 2.f));
  Var k = g.variable(testing::random_tensor({c.B, c.Tk, c.H * c.D}, rng, -2.f, 2.f));
  Var v = g.variable(testing::random_tensor({c.B, c.Tk, c.H * c.D}, rng));
  Var out = attend(q, k, v);
  Tensor w = testing::random_tensor(out.shape(), rng);
  g.backward(sum_all(mul(out, g.constant(w))));
  return {out.value().clone(), q.grad().clone(), k.grad().clone(), v.grad().clone()};
}

void expect_near(const Tensor& a, const Tensor& b, const char* what, float tol = 2e-5f) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, std::fabs(double{a.data()[i]} - b.data()[i]) /
                                (1.0 + std::fabs(double{b.data()[i]})));
  EXPECT_LT(worst, tol) << what;
}

class FusedAttention : public ::testing::TestWithParam<std::tuple<Case, int>> {};

TEST_P(FusedAttention, EqualsNaiveComposition) {
  // (no structured binding: clang 14, which builds `make test-tsan`, cannot capture one)
  const Case& c = std::get<0>(GetParam());
  const int threads = std::get<1>(GetParam());
  const int before = heed::threads();
  set_threads(threads);
  Result fused = run(
      c, [&](Var q, Var k, Var v) { return scaled_dot_product_attention(q, k, v, options(c)); },
      11);
  Result naive = run(
      c, [&](Var q, Var k, Var v) { return naive_attention(q, k, v, c); }, 11);
  set_threads(before);
  expect_near(fused.out, naive.out, "output");
  expect_near(fused.dq, naive.dq, "dQ");
  expect_near(fused.dk, naive.dk, "dK");
  expect_near(fused.dv, naive.dv, "dV");
}

// Tiles are 64 queries x 128 keys: 70 x 131 and 130 x 130 leave partial tiles on both axes;
// a query of length 1 against a long prefix is cached decoding; length 0 is a fully masked row.
// Sentence-sized heads of 16-64 (the four before the last three, and 1 x 200 x 32) take
// kernels/tile_gemm.h (row counts that leave 1-3 rows of a 4-row block, keys that do not fill
// 16 lanes); the others oneDNN's sgemm. The last three are decoding steps — one query against a
// cache or a source of at most one key tile: a row that sees no key, a causal one, an odd head
// size. Then chunked windows (a streaming encoder's): chunks that do not divide T, left contexts
// that reach across the 128-key tiles and ones that do not reach the sequence's start, a
// lookahead past the chunk, padding inside a window.
const Case kCases[] = {
    {2, 3, 70, 131, 16, false, {131, 77}},
    {2, 2, 130, 130, 8, true, {130, 129}},
    {3, 2, 5, 7, 7, false, {7, 1, 4}},
    {2, 4, 1, 200, 32, true, {}},
    {1, 1, 3, 260, 5, true, {}},
    {2, 1, 9, 9, 4, false, {9, 0}},
    {3, 2, 21, 21, 32, true, {21, 13, 1}},
    {2, 4, 13, 27, 16, false, {27, 5}},
    {2, 2, 19, 35, 48, true, {35, 20}},
    {1, 2, 7, 9, 64, false, {}},
    {3, 4, 1, 23, 32, false, {23, 7, 0}},
    {2, 2, 1, 128, 16, true, {}},
    {4, 1, 1, 17, 5, false, {17, 16, 1, 3}},
    {2, 2, 70, 70, 16, false, {70, 33}, 8, 16, 4},
    {1, 2, 300, 300, 32, false, {}, 16, 160, 0},
    {2, 1, 131, 131, 8, false, {131, 100}, 64, 64, 3},
    {1, 4, 40, 40, 12, false, {}, 5, 0, 7},
};

INSTANTIATE_TEST_SUITE_P(Shapes, FusedAttention,
                         ::testing::Combine(::testing::ValuesIn(kCases), ::testing::Values(1, 2)));

TEST(FusedAttention, FusedQkvEqualsSeparateOperands) {
  const Case c{2, 2, 67, 67, 8, true, {67, 40}};
  Rng rng(5);
  Tensor x = testing::random_tensor({c.B, c.Tq, 3 * c.H * c.D}, rng, -2.f, 2.f);
  Tensor w = testing::random_tensor({c.B, c.Tq, c.H * c.D}, rng);
  Graph g1, g2;
  // one [B, T, 3 h d] tensor
  Var qkv = g1.variable(x);
  Var out1 = self_attention(qkv, options(c));
  g1.backward(sum_all(mul(out1, g1.constant(w))));
  // the same numbers as three tensors
  Var whole = g2.variable(x);
  const int64_t W = c.H * c.D;
  Var q = slice(whole, 2, 0, W), k = slice(whole, 2, W, W), v = slice(whole, 2, 2 * W, W);
  Var out2 = naive_attention(q, k, v, c);
  g2.backward(sum_all(mul(out2, g2.constant(w))));
  expect_near(out1.value(), out2.value(), "output");
  expect_near(qkv.grad(), whole.grad(), "d qkv");
}

// The packed forms (rows of the sequences back to back, no padding) against the padded op
// between unpack and pack: outputs and every gradient, with sequences of length 0 and 1, ones
// that cross the 64-query and 128-key tiles, causal or not, on one and two threads.
TEST(FusedAttention, PackedFormsEqualThePaddedOpBetweenUnpackAndPack) {
  const std::vector<std::vector<int32_t>> batches = {{5, 0, 1, 3}, {70, 131, 12}, {1}, {9, 9}};
  const int before = heed::threads();
  for (int threads : {1, 2})
    for (bool causal : {false, true})
      for (const auto& lengths : batches) {
        SCOPED_TRACE(::testing::Message() << "threads " << threads << " causal " << causal
                                          << " first length " << lengths[0]);
        set_threads(threads);
        const int64_t H = 2, D = 8, W = H * D, Tk = 11;
        Graph probe;
        const Packing p0 = make_packing(probe, lengths);
        const auto B = static_cast<int64_t>(lengths.size());
        const std::vector<int32_t> keys(lengths.size(), 7);  // cross-attention: 7 of 11 real
        Rng rng(17);
        const Tensor x = testing::random_tensor({p0.N, 3 * W}, rng, -2.f, 2.f);
        const Tensor kv = testing::random_tensor({B, Tk, 2 * W}, rng, -2.f, 2.f);
        const Tensor w = testing::random_tensor({p0.N, W}, rng);
        // self-attention on qkv [N, 3W], and cross-attention of its first W columns on kv
        auto run_both = [&](bool packed) {
          Graph g;
          const Packing p = make_packing(g, lengths);
          Var qkv = g.variable(x), mem = g.variable(kv);
          const SdpaOptions self_opts{.heads = H, .causal = causal, .key_lengths = lengths};
          const SdpaOptions cross_opts{.heads = H, .key_lengths = keys};
          Var q = slice(qkv, 1, 0, W);
          Var self = packed ? self_attention(qkv, p, {.heads = H, .causal = causal})
                            : pack(self_attention(unpack(qkv, p), self_opts), p);
          Var cross = packed ? cross_attention(q, p, mem, cross_opts)
                             : pack(cross_attention(unpack(q, p), mem, cross_opts), p);
          g.backward(sum_all(mul(add(self, mul(cross, cross)), g.constant(w))));
          return std::vector<Tensor>{self.value().clone(), cross.value().clone(),
                                     qkv.grad().clone(), mem.grad().clone()};
        };
        const std::vector<Tensor> packed = run_both(true), padded = run_both(false);
        set_threads(before);
        expect_near(packed[0], padded[0], "self-attention output");
        expect_near(packed[1], padded[1], "cross-attention output");
        expect_near(packed[2], padded[2], "d qkv");
        expect_near(packed[3], padded[3], "d kv");
      }
}

// Causal masking: changing the keys and values at positions > i changes nothing at i, and the
// gradient reaching a future position from the outputs before it is exactly 0.
TEST(FusedAttention, CausalMaskLeaksNothingFromTheFuture) {
  const int64_t B = 1, T = 150, W = 16, cut = 97;
  Rng rng(3);
  Tensor q = testing::random_tensor({B, T, W}, rng), k = testing::random_tensor({B, T, W}, rng),
         v = testing::random_tensor({B, T, W}, rng);
  Tensor k2 = k.clone(), v2 = v.clone();
  for (int64_t t = cut; t < T; ++t)
    for (int64_t j = 0; j < W; ++j) {
      k2.data()[t * W + j] += 5.f;
      v2.data()[t * W + j] *= -3.f;
    }
  Graph g;
  SdpaOptions causal{.heads = 2, .causal = true};
  Var a = scaled_dot_product_attention(g.constant(q), g.constant(k), g.constant(v), causal);
  Var b = scaled_dot_product_attention(g.constant(q), g.constant(k2), g.constant(v2), causal);
  for (int64_t t = 0; t < cut; ++t)
    for (int64_t j = 0; j < W; ++j)
      ASSERT_EQ(a.value().data()[t * W + j], b.value().data()[t * W + j]) << "position " << t;
  double changed = 0;
  for (int64_t j = 0; j < W; ++j)
    changed += std::fabs(a.value().data()[cut * W + j] - b.value().data()[cut * W + j]);
  EXPECT_GT(changed, 1e-3) << "position " << cut << " must see its own key";
  // backward from the outputs before `cut` only
  Graph g2;
  Var kv = g2.variable(k), vv = g2.variable(v);
  Var out = scaled_dot_product_attention(g2.constant(q), kv, vv, causal);
  g2.backward(sum_all(slice(out, 1, 0, cut)));
  for (int64_t t = cut; t < T; ++t)
    for (int64_t j = 0; j < W; ++j) {
      ASSERT_EQ(kv.grad().data()[t * W + j], 0.f);
      ASSERT_EQ(vv.grad().data()[t * W + j], 0.f);
    }
}

TEST(FusedAttention, WeightsAreTheMaskedSoftmax) {
  // causal with padding, and a chunked window (chunks of 3, 2 keys to the left, 1 past the end)
  for (const Case& c :
       {Case{2, 2, 6, 9, 4, true, {9, 5}}, Case{2, 2, 9, 9, 4, false, {9, 5}, 3, 2, 1}}) {
    Rng rng(9);
    Graph g;
    Var q = g.constant(testing::random_tensor({c.B, c.Tq, c.H * c.D}, rng, -2.f, 2.f));
    Var k = g.constant(testing::random_tensor({c.B, c.Tk, c.H * c.D}, rng, -2.f, 2.f));
    Tensor w = attention_weights(q, k, options(c));  // [B, H, Tq, Tk]
    // oracle: the naive composition with V = identity rows gives the weights back
    Case wide = c;
    wide.D = c.Tk;  // one head of width Tk per head: V_h = I
    Tensor qw = Tensor::zeros({c.B, c.Tq, c.H * c.Tk}), kw = Tensor::zeros({c.B, c.Tk, c.H * c.Tk}),
           vw = Tensor::zeros({c.B, c.Tk, c.H * c.Tk});
    for (int64_t b = 0; b < c.B; ++b)
      for (int64_t h = 0; h < c.H; ++h) {
        for (int64_t t = 0; t < c.Tq; ++t)
          for (int64_t d = 0; d < c.D; ++d)
            qw.data()[(b * c.Tq + t) * c.H * c.Tk + h * c.Tk + d] =
                q.value().data()[(b * c.Tq + t) * c.H * c.D + h * c.D + d] *
                std::sqrt(static_cast<float>(c.Tk) / c.D);  // keep the 1/sqrt(d) of width D
        for (int64_t t = 0; t < c.Tk; ++t) {
          for (int64_t d = 0; d < c.D; ++d)
            kw.data()[(b * c.Tk + t) * c.H * c.Tk + h * c.Tk + d] =
                k.value().data()[(b * c.Tk + t) * c.H * c.D + h * c.D + d];
          vw.data()[(b * c.Tk + t) * c.H * c.Tk + h * c.Tk + t] = 1.f;
        }
      }
    Var oracle = naive_attention(g.constant(qw), g.constant(kw), g.constant(vw), wide);
    for (int64_t b = 0; b < c.B; ++b)
      for (int64_t h = 0; h < c.H; ++h)
        for (int64_t i = 0; i < c.Tq; ++i) {
          double row = 0;
          for (int64_t j = 0; j < c.Tk; ++j) {
            float got = w.data()[((b * c.H + h) * c.Tq + i) * c.Tk + j];
            float want = oracle.value().data()[(b * c.Tq + i) * c.H * c.Tk + h * c.Tk + j];
            EXPECT_NEAR(got, want, 1e-5f) << b << " " << h << " " << i << " " << j;
            row += got;
          }
          EXPECT_NEAR(row, 1.0, 1e-5);
        }
  }
}

// The graph of a forward + backward at T = 2048 holds the inputs, the output and their
// gradients (about ten [T, d] tensors) but never the [T, T] score matrix.
TEST(FusedAttention, MemoryGrowsWithTNotTSquared) {
  const int64_t T = 2048, W = 64;
  Rng rng(1);
  Graph g;
  Var q = g.variable(testing::random_tensor({1, T, W}, rng));
  Var k = g.variable(testing::random_tensor({1, T, W}, rng));
  Var v = g.variable(testing::random_tensor({1, T, W}, rng));
  Var out = scaled_dot_product_attention(q, k, v, {.heads = 1, .causal = true});
  g.backward(sum_all(out));
  const size_t row_bytes = T * W * sizeof(float), score_bytes = T * T * sizeof(float);
  EXPECT_LT(g.arena().bytes_in_use(), 12 * row_bytes);
  EXPECT_LT(g.arena().bytes_in_use(), score_bytes / 2) << "the graph holds O(T^2) memory";
}

// Beam search's cross-attention reads its memory's keys transposed once (kernels::transpose_keys)
// instead of per step and tile: the same floats as the op without them, at query counts either
// side of where the kernel transposes (kAbtTransposeRows), key counts around a vector and the
// 128-key tile, heads of 8 and 32, padded keys (lengths), and one thread or two.
TEST(FusedAttention, KeysTransposedAheadGiveTheSameFloats) {
  const int before = heed::threads();
  Rng rng(13);
  for (int threads : {1, 2})
    for (int64_t Tq : {1, 3, 4, 5, 9})
      for (int64_t Tk : {1, 15, 16, 17, 130})
        for (int64_t D : {8, 32}) {
          heed::set_threads(threads);
          const int64_t B = 3, H = 2, w = H * D;
          const std::vector<int32_t> lengths = {static_cast<int32_t>(Tk),
                                                static_cast<int32_t>((Tk + 1) / 2), 1};
          Graph g(Mode::Inference);
          Var q = g.constant(testing::random_tensor({B, Tq, w}, rng, -2.f, 2.f));
          Var kv = g.constant(testing::random_tensor({B, Tk, 2 * w}, rng, -2.f, 2.f));
          SdpaOptions opts{.heads = H, .key_lengths = lengths};
          const Tensor plain = cross_attention(q, kv, opts).value();
          Tensor kt = g.alloc(Shape{B, H, D, kernels::transposed_keys_row(Tk)});
          kernels::transpose_keys(kv.value().data(), {Tk * 2 * w, D, 2 * w},
                                  {.B = B, .H = H, .Tq = Tq, .Tk = Tk, .D = D}, kt.data());
          opts.keys_transposed = kt.data();
          const Tensor ahead = cross_attention(q, kv, opts).value();
          for (int64_t i = 0; i < plain.numel(); ++i)
            ASSERT_EQ(std::bit_cast<uint32_t>(ahead.data()[i]),
                      std::bit_cast<uint32_t>(plain.data()[i]))
                << "Tq " << Tq << " Tk " << Tk << " D " << D << " threads " << threads << " at "
                << i;
        }
  heed::set_threads(before);
  Graph training;
  Var q = training.variable(Tensor::zeros(Shape{1, 4, 8})),
      kv = training.variable(Tensor::zeros(Shape{1, 3, 16}));
  std::vector<float> kt(static_cast<size_t>(8 * kernels::transposed_keys_row(3)));
  EXPECT_THROW(cross_attention(q, kv, {.heads = 1, .keys_transposed = kt.data()}), Error);
}

}  // namespace
}  // namespace heed
