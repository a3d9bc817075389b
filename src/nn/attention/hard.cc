// Hard attention: each output step attends to one source position j, the context c_i = h_j
// (seed 003, section 3.1: c_i = h_{argmax_j alpha_ij}; Xu et al. 2015, "Show, Attend and Tell",
// section 4.1; Wu, Shapiro & Cotterell 2018, "Hard Non-Monotonic Attention for Character-Level
// Transduction"). alpha_i = softmax(e_i) with e_ij from any global score function (bahdanau by
// default, luong-*), trained one of three ways:
//   reinforce  j ~ alpha_i, c_i = h_j; with probability `mix` the expected context sum_j alpha_ij
//              h_j instead (Xu et al.: 0.5). The score function's gradient is REINFORCE's,
//              (R - b) d log alpha_ij, which the decoder forms from log_prob (nn/reinforce.h);
//              b a moving average, or log p(y_i) with the expected context in place of h_j
//   gumbel     w_i = one_hot(argmax_j y_ij) forward, dy_i backward (straight-through), with
//              y_i = softmax((e_i + g_i) / tau), g_ij ~ Gumbel(0, 1), tau annealed as
//              max(tau_min, tau_0 exp(-r step)) (Jang, Gu & Poole 2017)
//   exact      alpha_i and log alpha_i only: the decoder sums p(y_i | h_j) over j
//              (hard_marginal, autograd/ops/hard_marginal.h)
// Decoding takes j = argmax_j alpha_ij (or samples it): one row of h per step instead of a
// weighted sum over all S; an exact-trained model may instead decode with the marginal it was
// trained on (`marginal`, Wu et al. 2018's decoding), alpha_i reported.
// Leaves out: the score functions (bahdanau.cc, luong.cc) and the decoders (models/rnn_seq2seq).
#include <algorithm>
#include <cmath>

#include "heed/autograd/ops.h"
#include "heed/kernels/random.h"
#include "heed/nn/attention/attention.h"
#include "heed/util/error.h"
#include "heed/util/json.h"

namespace heed {
namespace {

// j ~ row (a distribution over S entries, zero on padding): the inverse CDF of u in [0, 1).
int32_t sample_row(const float* row, int64_t S, float u) {
  double c = 0;
  int32_t last = 0;
  for (int64_t j = 0; j < S; ++j) {
    if (row[j] <= 0.f) continue;
    last = static_cast<int32_t>(j);
    c += row[j];
    if (u < c) return last;
  }
  return last;  // rounding left u above the total: the last entry with mass
}

int32_t argmax_row(const float* row, int64_t S) {
  return static_cast<int32_t>(std::max_element(row, row + S) - row);
}

class HardAttention final : public Attention {
 public:
  HardAttention(const AttentionConfig& c, const Scope& s) : hard_(c.hard) {
    check(has_energies(c.hard.score), "hard attention scores with bahdanau or luong-*, not ",
          attention_name(c.hard.score));
    check(c.hard.mix >= 0.f && c.hard.mix <= 1.f, "hard attention: --hard-mix ", c.hard.mix,
          " is not a probability");
    check(c.hard.discount >= 0.f && c.hard.discount <= 1.f, "hard attention: --hard-discount ",
          c.hard.discount, " is not in [0, 1]");
    // b_t' (t' > t) comes from a state that step t's sample made: in a return it would bias
    // the estimate of step t's gradient
    check(c.hard.baseline != HardBaseline::Expected || c.hard.discount == 0.f,
          "hard attention: --hard-baseline expected needs --hard-discount 0 (the later steps' "
          "baselines depend on this step's sample), got ",
          c.hard.discount);
    check(c.hard.tau > 0.f && c.hard.tau_min > 0.f,
          "hard attention: Gumbel temperatures must be "
          "positive, got ",
          c.hard.tau, " and ", c.hard.tau_min);
    check(!c.hard.marginal || c.hard.training == HardTraining::Exact,
          "hard attention: decoding with the marginal over positions needs a model trained with "
          "--hard-train exact, not ",
          name_of(c.hard.training));
    AttentionConfig scorer = c;
    scorer.kind = c.hard.score;
    scorer_ = make_attention(scorer, s);  // the same parameters as that soft mechanism
  }

  AttentionState start(Graph& g, const Memory& m) const override { return scorer_->start(g, m); }

 protected:
  Attended compute(Graph& g, Var query, AttentionState& st) const override {
    Var e = scorer_->energies(g, query, st);  // [B, S]
    if (!g.training()) return hard_.marginal ? alignment(e, st) : choose(g, e, st);
    switch (hard_.training) {
      case HardTraining::Exact:
        return alignment(e, st);
      case HardTraining::Reinforce:
        return reinforce(g, e, st);
      case HardTraining::Gumbel:
        return gumbel(g, e, st);
    }
    fail("unknown hard attention training");
  }

 private:
  // Exact training, and decoding with the marginal: alpha_i and log alpha_i, which the decoder
  // sums over, p(y_i) = sum_j alpha_ij p(y_i | h_j)
  static Attended alignment(Var e, const AttentionState& st) {
    Attended a;
    a.log_weights = log_softmax(e, st.memory.mask);  // [B, S]
    a.weights = softmax(e, st.memory.mask);
    return a;
  }

  // Decoding: j = argmax_j alpha_ij (or j ~ alpha_i), c_i = h_j by a row gather.
  Attended choose(Graph& g, Var e, const AttentionState& st) const {
    const int64_t B = e.dim(0), S = e.dim(1);
    Var alpha = softmax(e, st.memory.mask);  // [B, S]
    const float* a = alpha.value().data();
    int32_t* chosen = g.arena().array<int32_t>(static_cast<size_t>(B));
    int32_t* rows = g.arena().array<int32_t>(static_cast<size_t>(B));
    Rng rng(hard_.sample ? g.next_stream() : 0);
    Tensor onehot = g.zeros(Shape{B, S});
    for (int64_t b = 0; b < B; ++b) {
      chosen[b] = hard_.sample ? sample_row(a + b * S, S, rng.uniform()) : argmax_row(a + b * S, S);
      rows[b] = static_cast<int32_t>(b * S + chosen[b]);
      onehot.data()[b * S + chosen[b]] = 1.f;
    }
    Attended out = hard_context(g, onehot, rows, chosen, st);
    if (st.distribution) out.weights = alpha;  // reported only; the context is h_j alone
    return out;
  }

  // c_i = h_j, the one-hot weights reported
  static Attended hard_context(Graph& g, const Tensor& onehot, int32_t* rows, int32_t* chosen,
                               const AttentionState& st) {
    const Var& h = st.memory.annotations;  // [B, S, Dm]
    const int64_t B = h.dim(0), S = h.dim(1), Dm = h.dim(2);
    Attended out;
    out.chosen = {chosen, static_cast<size_t>(B)};
    out.context = embedding(reshape(h, Shape{B * S, Dm}), {rows, static_cast<size_t>(B)},
                            Shape{B});  // [B, Dm]
    out.weights = g.constant(onehot);
    return out;
  }

  // Xu et al. 2015, section 4.1: s_i ~ Multinoulli(alpha_i), c_i = h_{s_i}; with probability
  // `mix`, the expected context sum_j alpha_ij h_j.
  Attended reinforce(Graph& g, Var e, const AttentionState& st) const {
    const int64_t B = e.dim(0), S = e.dim(1);
    Var alpha = softmax(e, st.memory.mask);          // [B, S]
    Var log_alpha = log_softmax(e, st.memory.mask);  // [B, S], -inf on padding
    const float* a = alpha.value().data();
    Rng rng(g.next_stream());
    Tensor onehot = g.zeros(Shape{B, S}), expected = g.zeros(Shape{B, 1}),
           sampled = g.zeros(Shape{B});
    int32_t* picked = g.arena().array<int32_t>(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) {
      const bool mix = rng.uniform() < hard_.mix;
      const int32_t j = sample_row(a + b * S, S, rng.uniform());
      picked[b] = static_cast<int32_t>(b * S + j);  // (a finite entry either way)
      expected.data()[b] = mix ? 1.f : 0.f;
      sampled.data()[b] = mix ? 0.f : 1.f;
      if (!mix) onehot.data()[b * S + j] = 1.f;
    }
    Attended out;
    // w_i = alpha_i for a row that mixes, one_hot(j) otherwise  [B, S]
    out.weights = alpha * g.constant(expected) + g.constant(onehot);
    out.context = weighted_sum(out.weights, st.memory.annotations);  // [B, Dm]
    // log alpha_ij of the sampled j, 0 for the mixed rows  [B]
    Var lp = embedding(reshape(log_alpha, Shape{B * S, 1}), {picked, static_cast<size_t>(B)},
                       Shape{B});  // [B, 1]
    out.log_prob = reshape(lp, Shape{B}) * g.constant(sampled);
    // H(alpha_i) = -sum_j alpha_ij log alpha_ij, the padding's 0 log 0 as 0  [B]
    out.entropy = -sum(alpha * masked_fill(log_alpha, st.memory.mask, 0.f), 1);
    // the baseline's context, sum_j alpha_ij h_j: the decoder scores y_i with it as well
    if (hard_.baseline == HardBaseline::Expected)
      out.expected = weighted_sum(alpha, st.memory.annotations);  // [B, Dm]
    return out;
  }

  // Straight-through Gumbel-softmax (Jang et al. 2017, section 2.2): the forward value one-hot,
  // the backward that of the relaxed sample y.
  Attended gumbel(Graph& g, Var e, const AttentionState& st) const {
    const int64_t B = e.dim(0), S = e.dim(1);
    const float tau = std::max(
        hard_.tau_min, hard_.tau * std::exp(-hard_.anneal * static_cast<float>(st.train_step)));
    Rng rng(g.next_stream());
    Tensor noise = g.alloc(Shape{B, S});
    for (float& x : noise.span())  // g = -log(-log u), u in (0, 1)
      x = -std::log(-std::log(std::max(rng.uniform(), 1e-20f)));
    Var y = softmax((e + g.constant(noise)) * (1.f / tau), st.memory.mask);  // [B, S]
    const float* yv = y.value().data();
    Tensor shift = g.alloc(Shape{B, S});  // one_hot(argmax y) - y, a constant
    for (int64_t b = 0; b < B; ++b) {
      const int32_t j = argmax_row(yv + b * S, S);
      for (int64_t k = 0; k < S; ++k)
        shift.data()[b * S + k] = (k == j ? 1.f : 0.f) - yv[b * S + k];
    }
    Attended out;
    out.weights = y + g.constant(shift);  // one_hot forward, dy backward
    out.context = weighted_sum(out.weights, st.memory.annotations);
    return out;
  }

  HardAttentionConfig hard_;
  std::unique_ptr<Attention> scorer_;
};

}  // namespace

std::unique_ptr<Attention> make_hard_attention(const AttentionConfig& c, const Scope& s) {
  return std::make_unique<HardAttention>(c, s);
}

void HardAttentionConfig::to_json(nlohmann::json& j) const {
  j["hard_score"] = attention_name(score);
  j["hard_train"] = name_of(training);
  j["hard_mix"] = json_number(mix);
  j["hard_entropy"] = json_number(entropy);
  if (baseline != HardBaseline::Global)  // absent: global, as every older model
    j["hard_baseline"] = name_of(baseline);
  if (discount != 1.f) j["hard_discount"] = json_number(discount);
  j["hard_tau"] = json_number(tau);
  j["hard_tau_min"] = json_number(tau_min);
  j["hard_anneal"] = json_number(anneal);
  j["hard_sample"] = sample;
  if (marginal) j["hard_marginal"] = true;  // absent: argmax decoding, as older models
}

HardAttentionConfig HardAttentionConfig::from_json(const nlohmann::json& j) {
  HardAttentionConfig h;
  h.score = parse_attention(j.at("hard_score").get<std::string>());
  h.training = parse_name<HardTraining>(j.at("hard_train").get<std::string>(), "hard_train");
  h.mix = j.at("hard_mix").get<float>();
  h.entropy = j.at("hard_entropy").get<float>();
  h.baseline =
      parse_name<HardBaseline>(j.value("hard_baseline", std::string("global")), "hard_baseline");
  h.discount = j.value("hard_discount", 1.f);
  h.tau = j.at("hard_tau").get<float>();
  h.tau_min = j.at("hard_tau_min").get<float>();
  h.anneal = j.at("hard_anneal").get<float>();
  h.sample = j.at("hard_sample").get<bool>();
  h.marginal = j.value("hard_marginal", false);
  return h;
}

}  // namespace heed
