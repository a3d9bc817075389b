// Joint CTC-attention decoding (see the header).
#include "heed/models/joint_ctc_decoder.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "heed/autograd/ops.h"
#include "heed/autograd/ops/ctc.h"
#include "heed/data/vocab.h"
#include "heed/util/error.h"

namespace heed {

JointCtcHead::JointCtcHead(int64_t width, int64_t vocab, const Scope& scope)
    : W_(&scope.param("ctc/W", {vocab, width}, Init::glorot_uniform())),
      b_(&scope.param("ctc/b", {vocab}, Init::zeros())) {}

Var JointCtcHead::loss(const Seq2SeqBatch& b, Var annotations, std::span<const int32_t> lengths,
                       float dropout_p) const {
  Graph& g = annotations.graph();
  const CtcTargets y = ctc_targets(g, b);  // tgt_out without <eos>; the blank is the padding id
  Var logits = linear(dropout(annotations, dropout_p), g.param(*W_), g.param(*b_));  // [B, S, V]
  Var nll = ctc_loss(logits, lengths, y.labels, y.lengths,
                     {.blank = Vocab::kPad, .reduction = Reduction::Sum, .zero_infinity = true});
  return affine(nll, 1.f / static_cast<float>(std::max<int64_t>(b.target_tokens, 1)), 0.f);
}

std::unique_ptr<IncrementalDecoder> JointCtcHead::decoder(std::unique_ptr<IncrementalDecoder> inner,
                                                          Var annotations,
                                                          std::span<const int32_t> lengths,
                                                          float lambda, int64_t lookahead) const {
  Graph& g = annotations.graph();
  const Var lp = log_softmax(linear(annotations, g.param(*W_), g.param(*b_)));  // [R, S, V]
  const std::vector<int32_t> rows(lengths.begin(), lengths.end());
  return std::make_unique<JointCtcDecoder>(std::move(inner), lp.value(), rows, Vocab::kPad, lambda,
                                           lookahead);
}

std::vector<float> JointCtcHead::log_probs(std::span<const float> states, int64_t D) const {
  const auto n = static_cast<int64_t>(states.size()) / D;
  if (n == 0) return {};
  Graph g(Mode::Inference);
  const Var lp = log_softmax(linear(g.input(Shape{n, D}, states), g.param(*W_), g.param(*b_)));
  const std::span<const float> v = lp.value().span();
  return {v.begin(), v.end()};
}

JointCtcDecoder::JointCtcDecoder(std::unique_ptr<IncrementalDecoder> inner, const Tensor& log_probs,
                                 std::span<const int32_t> lengths, int32_t blank, float lambda,
                                 int64_t lookahead)
    : inner_(std::move(inner)),
      V_(log_probs.shape().dim(2)),
      blank_(blank),
      lambda_(lambda),
      lookahead_(lookahead) {
  check(lambda >= 0.f && lambda <= 1.f, "joint CTC-attention decoding: a CTC weight of ", lambda,
        " (0 to 1)");
  const int64_t R = log_probs.shape().dim(0), S = log_probs.shape().dim(1);
  S_ = S;
  check(static_cast<int64_t>(lengths.size()) == R, "joint decoding: ", lengths.size(),
        " lengths for ", R, " rows");
  rows_.resize(static_cast<size_t>(R));
  for (int64_t r = 0; r < R; ++r) {
    Row& row = rows_[static_cast<size_t>(r)];
    row.T = lengths[static_cast<size_t>(r)];
    check(row.T >= 1 && row.T <= S, "joint decoding: a row of ", row.T, " frames");
    const float* src = log_probs.data() + r * S * V_;
    row.log_probs.assign(src, src + row.T * V_);
    row.prefix = scorer(row).empty();
  }
}

void joint_scores(const float* att, std::span<const float> psi, float psi_g, float lambda,
                  int32_t blank, std::span<float> out) {
  // <bos>, the blank (= padding) and anything CTC cannot emit: not a candidate
  auto candidate = [&](size_t c) {
    return !std::cmp_equal(c, Vocab::kBos) && !std::cmp_equal(c, blank) && std::isfinite(psi[c]);
  };
  bool any = false;
  for (size_t c = 0; c < out.size() && !any; ++c) any = candidate(c);
  if (lambda == 0.f || !any) {  // the attention decoder's own scores, bit for bit
    std::copy(att, att + out.size(), out.begin());
    return;
  }
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (size_t c = 0; c < out.size(); ++c)
    out[c] = candidate(c) ? (1.f - lambda) * att[c] + lambda * (psi[c] - psi_g) : neg_inf;
}

int64_t attention_stop(const float* weights, int64_t S) {
  int64_t stop = S - 1;
  while (stop >= 0 && weights[stop] == 0.f) --stop;
  return stop;
}

int64_t JointCtcDecoder::horizon(const Step& inner, int64_t r, int64_t T) const {
  if (lookahead_ < 0) return T;
  const int64_t stop = attention_stop(inner.weights + r * S_, S_);
  return stop < 0 ? T : std::min(stop + 1 + lookahead_, T);
}

IncrementalDecoder::Step JointCtcDecoder::step(std::span<const int32_t> prev, Scores scores) {
  const auto R = static_cast<int64_t>(rows_.size());
  check(static_cast<int64_t>(prev.size()) == R, "joint decoding: ", prev.size(), " tokens for ", R,
        " rows");
  // the prefixes grow by the tokens the search chose (not by <bos>, or the <eos> and padding
  // it feeds finished rows)
  if (t_ > 0)
    for (int64_t r = 0; r < R; ++r) {
      const int32_t y = prev[static_cast<size_t>(r)];
      if (y >= Vocab::kSpecials || y == Vocab::kUnk) {
        Row& row = rows_[static_cast<size_t>(r)];
        row.prefix = scorer(row).extend(row.prefix, y);
      }
    }
  ++t_;
  Step inner = inner_->step(prev, Scores::LogProbs);
  if (scores == Scores::None) return {nullptr, inner.weights, inner.ran_off};
  scores_.resize(static_cast<size_t>(R * V_));
  psi_.resize(static_cast<size_t>(V_));
  check(lookahead_ < 0 || inner.weights != nullptr,
        "joint CTC-MoChA decoding: the attention decoder gave no weights");
  for (int64_t r = 0; r < R; ++r) {
    const Row& row = rows_[static_cast<size_t>(r)];
    const float* att = inner.scores + r * V_;
    float* out = scores_.data() + r * V_;
    const int64_t tau = horizon(inner, r, row.T);
    scorer(row).scores(row.prefix, Vocab::kEos, psi_, tau);
    if (tau < row.T) psi_[Vocab::kEos] = -std::numeric_limits<float>::infinity();  // audio is left
    const float psi_g = kernels::CtcPrefixScorer::psi(row.prefix, tau);
    joint_scores(att, psi_, psi_g, lambda_, blank_, {out, static_cast<size_t>(V_)});
  }
  return {scores_.data(), inner.weights, inner.ran_off};
}

void JointCtcDecoder::reorder(std::span<const int32_t> from) {
  inner_->reorder(from);
  std::vector<Row> next;
  next.reserve(from.size());
  for (int32_t r : from) next.push_back(rows_[static_cast<size_t>(r)]);
  rows_ = std::move(next);
}

bool JointCtcDecoder::drop_rows(std::span<const int32_t> keep) {
  if (!inner_->drop_rows(keep)) return false;
  std::vector<Row> next;
  next.reserve(keep.size());
  for (int32_t r : keep) next.push_back(std::move(rows_[static_cast<size_t>(r)]));
  rows_ = std::move(next);
  return true;
}

}  // namespace heed
