// One registry of finite-difference gradient checks: every op of autograd/ops/, with
// broadcasting, masks, transposes and odd shapes.
// To add an op: append an OpCase below with its input shapes, the function that calls the op,
// and (if its curvature or kinks need it) its own input range and tolerance.
#include <gtest/gtest.h>

#include <limits>

#include "heed/util/error.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

using testing::Fn;
using testing::GradCheck;

struct OpCase {
  std::string name;
  std::vector<Shape> inputs;
  Fn fn;
  float lo = -1.f, hi = 1.f, gap = 0.f;  // input range; gap keeps inputs away from 0
  GradCheck check = {};
};

void PrintTo(const OpCase& c, std::ostream* os) {
  *os << c.name;
}

const float kInf = std::numeric_limits<float>::infinity();

Tensor mask_tensor(const Shape& s, std::vector<float> v) {
  return Tensor::from(s, v);
}

std::vector<OpCase> cases() {
  std::vector<OpCase> c;
  auto add_case = [&](OpCase oc) { c.push_back(std::move(oc)); };
  // --- matmul family
  add_case({"matmul_2d", {{3, 4}, {4, 5}}, [](Graph&, auto& x) { return matmul(x[0], x[1]); }});
  add_case({"matmul_trans_a", {{4, 3}, {4, 5}}, [](Graph&, auto& x) {
              return matmul(x[0], x[1], {.trans_a = true});
            }});
  add_case({"matmul_trans_b", {{3, 4}, {5, 4}}, [](Graph&, auto& x) {
              return matmul(x[0], x[1], {.trans_b = true});
            }});
  add_case({"matmul_trans_ab_alpha", {{4, 3}, {5, 4}}, [](Graph&, auto& x) {
              return matmul(x[0], x[1], {.trans_a = true, .trans_b = true, .alpha = 0.5f});
            }});
  add_case({"matmul_batched", {{2, 3, 4}, {2, 4, 5}}, [](Graph&, auto& x) {
              return matmul(x[0], x[1]);
            }});
  add_case({"matmul_batched_4d_trans_b", {{2, 2, 3, 4}, {2, 2, 5, 4}}, [](Graph&, auto& x) {
              return matmul(x[0], x[1], {.trans_b = true});
            }});
  add_case({"matmul_batched_a_shared_b", {{2, 3, 4}, {4, 5}}, [](Graph&, auto& x) {
              return matmul(x[0], x[1]);
            }});
  add_case({"matmul_batched_trans_a_shared_b", {{2, 4, 3}, {4, 5}}, [](Graph&, auto& x) {
              return matmul(x[0], x[1], {.trans_a = true});
            }});
  add_case({"matmul_shared_a_batched_b", {{3, 4}, {2, 4, 5}}, [](Graph&, auto& x) {
              return matmul(x[0], x[1]);
            }});
  add_case({"linear_bias", {{2, 3, 4}, {5, 4}, {5}}, [](Graph&, auto& x) {
              return linear(x[0], x[1], x[2]);
            }});
  add_case(
      {"linear_no_bias", {{3, 4}, {5, 4}}, [](Graph&, auto& x) { return linear(x[0], x[1]); }});
  // --- broadcasting arithmetic and scalars
  add_case({"add_same", {{3, 4}, {3, 4}}, [](Graph&, auto& x) { return x[0] + x[1]; }});
  add_case({"add_bias_broadcast", {{2, 3, 4}, {4}}, [](Graph&, auto& x) { return x[0] + x[1]; }});
  add_case(
      {"sub_both_broadcast", {{2, 1, 4}, {3, 1}}, [](Graph&, auto& x) { return x[0] - x[1]; }});
  add_case(
      {"mul_both_broadcast", {{2, 1, 4}, {1, 3, 1}}, [](Graph&, auto& x) { return x[0] * x[1]; }});
  add_case({"mul_scalar_tensor", {{3, 4}, {}}, [](Graph&, auto& x) { return x[0] * x[1]; }});
  add_case({"div_broadcast",
            {{2, 3, 1}, {1, 3, 4}},
            [](Graph&, auto& x) { return x[0] / x[1]; },
            0.5f,
            2.f});
  add_case({"div_4d",
            {{2, 2, 2, 3}, {2, 1, 2, 3}},
            [](Graph&, auto& x) { return x[0] / x[1]; },
            0.5f,
            2.f});
  add_case({"affine", {{3, 5}}, [](Graph&, auto& x) { return 2.5f - 3.f * x[0] / 2.f; }});
  // --- activations
  add_case({"tanh", {{4, 7}}, [](Graph&, auto& x) { return tanh(x[0] * 2.f); }});
  add_case({"sigmoid", {{4, 7}}, [](Graph&, auto& x) { return sigmoid(x[0] * 3.f); }});
  add_case({"relu", {{4, 7}}, [](Graph&, auto& x) { return relu(x[0]); }, -1.f, 1.f, 0.05f});
  add_case({"gelu", {{4, 7}}, [](Graph&, auto& x) { return gelu(x[0] * 2.f); }});
  add_case({"exp", {{4, 7}}, [](Graph&, auto& x) { return exp(x[0]); }});
  add_case({"log", {{4, 7}}, [](Graph&, auto& x) { return log(x[0]); }, 0.5f, 2.f});
  add_case({"sqrt", {{4, 7}}, [](Graph&, auto& x) { return sqrt(x[0]); }, 0.5f, 2.f});
  // --- softmax family, with masks
  add_case({"softmax", {{3, 6}}, [](Graph&, auto& x) { return softmax(x[0] * 2.f); }});
  add_case({"log_softmax", {{3, 6}}, [](Graph&, auto& x) { return log_softmax(x[0] * 2.f); }});
  add_case({"softmax_padding_mask", {{2, 3, 5}}, [](Graph&, auto& x) {
              // [B=2, 1, S=5]: the second sequence has 2 padding positions
              static Tensor m = mask_tensor({2, 1, 5}, {0, 0, 0, 0, 0, 0, 0, 0, -kInf, -kInf});
              return softmax(x[0], m);
            }});
  add_case({"softmax_causal_mask", {{2, 4, 4}}, [](Graph&, auto& x) {
              static Tensor m = mask_tensor(
                  {4, 4}, {0, -kInf, -kInf, -kInf, 0, 0, -kInf, -kInf, 0, 0, 0, -kInf, 0, 0, 0, 0});
              return softmax(x[0], m);
            }});
  add_case({"log_softmax_mask", {{3, 5}}, [](Graph&, auto& x) {
              static Tensor m = mask_tensor({3, 5}, {0, 0, 0, -kInf, -kInf, 0, -kInf, 0, 0, 0,
                                                     -kInf, -kInf, -kInf, -kInf, -kInf});
              // The fully masked row has no distribution; masked_fill makes -inf finite.
              return masked_fill(log_softmax(x[0], m), m, 0.f);
            }});
  add_case({"masked_fill_broadcast", {{2, 3, 4}}, [](Graph&, auto& x) {
              static Tensor m = mask_tensor({2, 1, 4}, {0, 1, 0, 0, 1, 1, 0, 1});
              return masked_fill(x[0], m, -7.f);
            }});
  // --- reductions
  add_case({"sum_axis0", {{3, 4, 2}}, [](Graph&, auto& x) { return sum(x[0], 0); }});
  add_case({"sum_axis1_keepdim", {{3, 4, 2}}, [](Graph&, auto& x) { return sum(x[0], 1, true); }});
  add_case({"mean_last", {{3, 4, 5}}, [](Graph&, auto& x) { return mean(x[0], -1); }});
  add_case({"max_axis1", {{3, 5, 2}}, [](Graph&, auto& x) { return max(x[0], 1); }});
  add_case({"max_last_keepdim", {{4, 6}}, [](Graph&, auto& x) { return max(x[0], -1, true); }});
  add_case({"sum_all", {{3, 4}}, [](Graph&, auto& x) { return sum_all(x[0]); }});
  add_case({"mean_all", {{2, 3, 4}}, [](Graph&, auto& x) { return mean_all(x[0]); }});
  // --- shape ops
  add_case({"reshape", {{2, 6}}, [](Graph&, auto& x) { return reshape(x[0], {3, 2, 2}) * 2.f; }});
  add_case({"transpose", {{2, 3, 4}}, [](Graph&, auto& x) { return transpose(x[0], 0, 2); }});
  add_case({"permute_4d", {{2, 3, 4, 5}}, [](Graph&, auto& x) {
              return permute(x[0], {2, 0, 3, 1});
            }});
  add_case({"concat_axis0", {{2, 3}, {1, 3}, {3, 3}}, [](Graph&, auto& x) {
              return concat({x[0], x[1], x[2]}, 0);
            }});
  add_case({"concat_axis_last", {{2, 3, 2}, {2, 3, 5}}, [](Graph&, auto& x) {
              return concat({x[0], x[1]}, -1);
            }});
  add_case({"concat_same_input_twice", {{2, 3}}, [](Graph&, auto& x) {
              return concat({x[0], x[0]}, 1);
            }});
  add_case({"slice_axis0_view", {{5, 3}}, [](Graph&, auto& x) { return slice(x[0], 0, 1, 3); }});
  add_case({"slice_axis1", {{2, 5, 3}}, [](Graph&, auto& x) { return slice(x[0], 1, 2, 2); }});
  add_case({"select_axis2", {{2, 3, 4}}, [](Graph&, auto& x) { return select(x[0], 2, 3); }});
  // --- embedding, dropout, layer norm
  add_case({"embedding_repeated_ids", {{6, 4}}, [](Graph&, auto& x) {
              static const std::vector<int32_t> ids = {1, 5, 1, 0, 5, 5};
              return embedding(x[0], ids, {2, 3});
            }});
  add_case({"dropout", {{5, 8}}, [](Graph&, auto& x) { return dropout(x[0], 0.3f); }});
  // packed sequences of lengths 4, 0, 1, 2 padded to 4: padding gets no gradient
  add_case({"pack", {{4, 4, 3}}, [](Graph& g, auto& x) {
              static const std::vector<int32_t> lengths = {4, 0, 1, 2};
              return pack(x[0], make_packing(g, lengths));
            }});
  add_case({"unpack", {{7, 3}}, [](Graph& g, auto& x) {
              static const std::vector<int32_t> lengths = {4, 0, 1, 2};
              return unpack(x[0], make_packing(g, lengths, 5));
            }});
  // rows by index (an RNN's time-major packing): rows 5, 0, 3 of 6; and back among 6
  add_case({"gather_rows", {{6, 3}}, [](Graph&, auto& x) {
              static const std::vector<int32_t> rows = {5, 0, 3};
              return gather_rows(x[0], rows);
            }});
  add_case({"scatter_rows", {{3, 4}}, [](Graph&, auto& x) {
              static const std::vector<int32_t> rows = {5, 0, 3};
              return scatter_rows(x[0], rows, 6);
            }});
  add_case({"layer_norm",
            {{3, 7}, {7}, {7}},
            [](Graph&, auto& x) { return layer_norm(x[0] * 2.f, x[1], x[2]); },
            -1.f,
            1.f,
            0.f,
            {.eps = 5e-3f, .rtol = 3e-2f, .atol = 2e-3f}});
  // --- losses
  add_case({"cross_entropy", {{4, 6}}, [](Graph&, auto& x) {
              static const std::vector<int32_t> t = {0, 5, 2, 2};
              return cross_entropy(x[0] * 2.f, t);
            }});
  add_case({"cross_entropy_ignore_smoothing", {{2, 3, 5}}, [](Graph&, auto& x) {
              static const std::vector<int32_t> t = {4, -1, 0, 1, -1, 3};
              return cross_entropy(x[0] * 2.f, t, {.ignore_index = -1, .label_smoothing = 0.1f});
            }});
  add_case({"cross_entropy_sum", {{3, 4}}, [](Graph&, auto& x) {
              static const std::vector<int32_t> t = {3, 1, 0};
              return cross_entropy(x[0], t, {.reduction = Reduction::Sum});
            }});
  add_case({"linear_cross_entropy", {{2, 3, 4}, {5, 4}, {5}}, [](Graph&, auto& x) {
              static const std::vector<int32_t> t = {4, -1, 0, 1, 2, 3};
              return linear_cross_entropy(x[0] * 2.f, x[1], x[2], t,
                                          {.ignore_index = -1, .label_smoothing = 0.1f});
            }});
  // --- fused recurrent cells
  add_case({"gru_cell", {{3, 12}, {3, 4}, {12, 4}, {12}}, [](Graph&, auto& x) {
              return gru_cell(x[0] * 2.f, x[1], x[2], x[3]);
            }});
  add_case({"lstm_cell", {{3, 16}, {3, 4}, {3, 4}, {16, 4}}, [](Graph&, auto& x) {
              LstmState s = lstm_cell(x[0] * 2.f, x[1], x[2], x[3]);
              return concat({s.h, s.c * 0.5f}, 1);  // both outputs carry gradient
            }});
  // --- fused scaled dot-product attention (tile edges are crossed in tests/kernels/)
  add_case({"attention_padding", {{2, 3, 4}, {2, 5, 4}, {2, 5, 4}}, [](Graph&, auto& x) {
              static const std::vector<int32_t> len = {5, 2};
              return scaled_dot_product_attention(x[0] * 2.f, x[1], x[2],
                                                  {.heads = 2, .key_lengths = len});
            }});
  add_case({"attention_causal_offset", {{2, 3, 6}, {2, 5, 6}, {2, 5, 6}}, [](Graph&, auto& x) {
              return scaled_dot_product_attention(x[0] * 2.f, x[1], x[2],
                                                  {.heads = 3, .causal = true});
            }});
  add_case({"self_attention_fused_qkv", {{2, 4, 12}}, [](Graph&, auto& x) {
              static const std::vector<int32_t> len = {4, 3};
              return self_attention(x[0] * 2.f, {.heads = 2, .causal = true, .key_lengths = len});
            }});
  add_case({"attention_same_operand", {{2, 4, 6}}, [](Graph&, auto& x) {
              return scaled_dot_product_attention(x[0], x[0], x[0], {.heads = 2});
            }});
  // packed rows of sequences of lengths 3, 0, 2 (5 rows)
  add_case({"self_attention_packed", {{5, 12}}, [](Graph& g, auto& x) {
              static const std::vector<int32_t> len = {3, 0, 2};
              return self_attention(x[0] * 2.f, make_packing(g, len), {.heads = 2});
            }});
  add_case({"self_attention_packed_causal", {{5, 12}}, [](Graph& g, auto& x) {
              static const std::vector<int32_t> len = {3, 0, 2};
              return self_attention(x[0] * 2.f, make_packing(g, len), {.heads = 2, .causal = true});
            }});
  add_case({"cross_attention_packed_queries", {{5, 4}, {3, 4, 8}}, [](Graph& g, auto& x) {
              static const std::vector<int32_t> len = {3, 0, 2}, keys = {4, 2, 1};
              return cross_attention(x[0] * 2.f, make_packing(g, len), x[1],
                                     {.heads = 2, .key_lengths = keys});
            }});
  return c;
}

class OpGradient : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpGradient, MatchesFiniteDifferences) {
  const OpCase& oc = GetParam();
  Rng rng(7);
  std::vector<Tensor> inputs;
  for (const Shape& s : oc.inputs)
    inputs.push_back(testing::random_tensor(s, rng, oc.lo, oc.hi, oc.gap));
  testing::expect_gradients(oc.fn, inputs, oc.check);
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpGradient, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

// pack keeps the real rows, sequence after sequence; unpack puts them back and zeroes padding.
TEST(Packing, PackAndUnpackMoveRowsInSequenceOrder) {
  Graph g(Mode::Inference);
  const std::vector<int32_t> lengths = {2, 0, 3};
  const Packing p = make_packing(g, lengths);
  EXPECT_EQ(p.T, 3);
  EXPECT_EQ(p.N, 5);
  Tensor x = Tensor::empty({3, 3, 1});  // entry (b, t) = 10 b + t
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t t = 0; t < 3; ++t) x.data()[b * 3 + t] = static_cast<float>(10 * b + t);
  Var packed = pack(g.constant(x), p);
  EXPECT_EQ(std::vector<float>(packed.value().span().begin(), packed.value().span().end()),
            (std::vector<float>{0, 1, 20, 21, 22}));
  Var back = unpack(packed, p);
  EXPECT_EQ(std::vector<float>(back.value().span().begin(), back.value().span().end()),
            (std::vector<float>{0, 1, 0, 0, 0, 0, 20, 21, 22}));
  EXPECT_THROW(make_packing(g, lengths, 2), Error);  // shorter than the longest sequence
}

}  // namespace
}  // namespace heed
