// Shared pieces of the attention family: names, the factory, padding masks, weighted sums.
// Leaves out: the mechanisms (one file each beside this one).
#include "heed/nn/attention/attention.h"

#include <limits>

#include "heed/autograd/ops.h"
#include "heed/util/error.h"

namespace heed {

std::unique_ptr<Attention> make_none_attention();
std::unique_ptr<Attention> make_bahdanau_attention(const AttentionConfig& c, const Scope& s);
std::unique_ptr<Attention> make_luong_attention(const AttentionConfig& c, const Scope& s);
std::unique_ptr<Attention> make_local_attention(const AttentionConfig& c, const Scope& s);
std::unique_ptr<Attention> make_monotonic_attention(const AttentionConfig& c, const Scope& s);
std::unique_ptr<Attention> make_hard_attention(const AttentionConfig& c, const Scope& s);
std::unique_ptr<Attention> make_location_attention(const AttentionConfig& c, const Scope& s);
std::unique_ptr<Attention> make_structured_attention(const AttentionConfig& c, const Scope& s);

std::span<const Named<AttentionKind>> names(AttentionKind) {
  static constexpr Named<AttentionKind> kNames[] = {{AttentionKind::None, "none"},
                                                    {AttentionKind::Bahdanau, "bahdanau"},
                                                    {AttentionKind::LuongDot, "luong-dot"},
                                                    {AttentionKind::LuongGeneral, "luong-general"},
                                                    {AttentionKind::LuongConcat, "luong-concat"},
                                                    {AttentionKind::LocalM, "local-m"},
                                                    {AttentionKind::LocalP, "local-p"},
                                                    {AttentionKind::Monotonic, "monotonic"},
                                                    {AttentionKind::Mocha, "mocha"},
                                                    {AttentionKind::Hard, "hard"},
                                                    {AttentionKind::Location, "location"},
                                                    {AttentionKind::Sigmoid, "sigmoid"},
                                                    {AttentionKind::Structured, "structured"}};
  return kNames;
}

std::span<const Named<HardTraining>> names(HardTraining) {
  static constexpr Named<HardTraining> kNames[] = {{HardTraining::Reinforce, "reinforce"},
                                                   {HardTraining::Gumbel, "gumbel"},
                                                   {HardTraining::Exact, "exact"}};
  return kNames;
}

std::span<const Named<HardBaseline>> names(HardBaseline) {
  static constexpr Named<HardBaseline> kNames[] = {{HardBaseline::Global, "global"},
                                                   {HardBaseline::Word, "word"},
                                                   {HardBaseline::Expected, "expected"}};
  return kNames;
}

AttentionKind parse_attention(const std::string& name) {
  return parse_name<AttentionKind>(name, "attention");
}

std::string attention_name(AttentionKind kind) {
  return name_of(kind);
}

std::unique_ptr<Attention> make_attention(const AttentionConfig& c, const Scope& scope) {
  switch (c.kind) {
    case AttentionKind::None:
      return make_none_attention();
    case AttentionKind::Bahdanau:
      return make_bahdanau_attention(c, scope);
    case AttentionKind::LuongDot:
    case AttentionKind::LuongGeneral:
    case AttentionKind::LuongConcat:
      return make_luong_attention(c, scope);
    case AttentionKind::LocalM:
    case AttentionKind::LocalP:
      return make_local_attention(c, scope);
    case AttentionKind::Monotonic:
    case AttentionKind::Mocha:
      return make_monotonic_attention(c, scope);
    case AttentionKind::Hard:
      return make_hard_attention(c, scope);
    case AttentionKind::Location:
      return make_location_attention(c, scope);
    case AttentionKind::Sigmoid:
    case AttentionKind::Structured:
      return make_structured_attention(c, scope);
  }
  fail("unknown attention kind");
}

DecoderStyle decoder_style(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::None:
    case AttentionKind::Bahdanau:
    case AttentionKind::Monotonic:
    case AttentionKind::Mocha:
    case AttentionKind::Hard:
    case AttentionKind::Location:
      return DecoderStyle::Bahdanau;
    case AttentionKind::LuongDot:
    case AttentionKind::LuongGeneral:
    case AttentionKind::LuongConcat:
    case AttentionKind::LocalM:
    case AttentionKind::LocalP:
    case AttentionKind::Sigmoid:  // the paper's translation model: Luong's, input feeding
    case AttentionKind::Structured:
      return DecoderStyle::Luong;
  }
  fail("unknown attention kind");
}

Tensor padding_mask(std::span<const int32_t> lengths, int64_t S, Graph& g) {
  const auto B = static_cast<int64_t>(lengths.size());
  Tensor m = g.alloc(Shape{B, S});  // [B, S]
  for (int64_t b = 0; b < B; ++b) {
    check(lengths[b] >= 1 && lengths[b] <= S, "source length ", lengths[b], " of sequence ", b,
          " is outside [1, ", S, "]");
    for (int64_t s = 0; s < S; ++s)
      m.data()[b * S + s] = s < lengths[b] ? 0.f : -std::numeric_limits<float>::infinity();
  }
  return m;
}

bool has_energies(AttentionKind kind) {
  return kind == AttentionKind::Bahdanau || kind == AttentionKind::LuongDot ||
         kind == AttentionKind::LuongGeneral || kind == AttentionKind::LuongConcat;
}

bool supports_wait_k(AttentionKind kind) {
  return has_energies(kind) || kind == AttentionKind::Hard;  // a softmax over the memory's mask
}

Var Attention::energies(Graph&, Var, AttentionState&) const {
  fail("this attention has no energies to score hard attention with (bahdanau and luong-* do)");
}

Attended Attention::compute_wait_k(Graph& g, Var query, AttentionState& state) const {
  // Ma et al. 2019: output i (0-based) is written after reading g(i) = min(i + k, |x|) source
  // tokens and attends to those only; on audio a token is a chunk of positions (Ma, Pino &
  // Koehn 2020)
  const Tensor full = state.memory.mask;  // [B, S]
  const int64_t B = full.shape()[0], S = full.shape()[1];
  const int64_t read = (state.step + state.wait_k) * state.wait_chunk;
  Tensor prefix = g.alloc(full.shape());
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < S; ++j)
      prefix.data()[b * S + j] = j < read ? full.data()[b * S + j] : -inf;
  state.memory.mask = prefix;
  Attended a = compute(g, query, state);
  state.memory.mask = full;
  return a;
}

void AttentionState::reorder(std::span<const int32_t> from) {
  // rows `from` of each [B, S] value: a row gather is an embedding lookup
  for (Var* v : carried())
    if (v->valid()) *v = embedding(*v, from, Shape{static_cast<int64_t>(from.size())});
}

Var weighted_sum(Var alpha, Var memory) {
  return context_vector(alpha, memory);  // c_i = sum_j alpha_ij h_j  [B, Dm]
}

Var bilinear_scores(Var keys, Var h_t) {
  const int64_t B = h_t.dim(0), S = keys.dim(1), D = h_t.dim(1);
  return reshape(matmul(keys, reshape(h_t, Shape{B, D, 1})), Shape{B, S});  // [B, S, D] x [B, D, 1]
}

}  // namespace heed
