// Ensemble decoding (see the header).
#include "heed/models/ensemble.h"

#include <algorithm>
#include <cmath>

#include "heed/kernels/parallel.h"
#include "heed/util/error.h"

namespace heed {
namespace {

// The batch with every source read in the other direction (positions 0 .. length-1 of each
// column reversed; padding stays at the end).
Seq2SeqBatch flip_sources(const Seq2SeqBatch& b) {
  Seq2SeqBatch f = b;
  for (int64_t i = 0; i < b.B; ++i) {
    const int64_t n = b.src_lengths[i];
    for (int64_t k = 0; k < n; ++k) f.src[k * b.B + i] = b.src[(n - 1 - k) * b.B + i];
  }
  return f;
}

class EnsembleDecoder : public IncrementalDecoder {
 public:
  EnsembleDecoder(std::vector<std::unique_ptr<Graph>> graphs,
                  std::vector<std::unique_ptr<IncrementalDecoder>> members,
                  std::vector<bool> flipped, const Seq2SeqBatch& b, int64_t rows_per_source,
                  int64_t V, bool weights)
      : graphs_(std::move(graphs)),
        members_(std::move(members)),
        flipped_(std::move(flipped)),
        lengths_(b.src_lengths),
        per_source_(rows_per_source),
        S_(b.S),
        V_(V),
        want_weights_(weights) {}

  Step step(std::span<const int32_t> prev, Scores scores) override {
    if (scores == Scores::None) {  // every member's state advanced alone
      for (auto& member : members_) member->step(prev, Scores::None);
      return {};
    }
    const auto rows = static_cast<int64_t>(prev.size());
    const auto M = static_cast<int64_t>(members_.size());
    std::vector<Step> s(members_.size());
    // every member gives log-probabilities: their mean in probability is not a mean of logits
    for (size_t m = 0; m < members_.size(); ++m) s[m] = members_[m]->step(prev, Scores::LogProbs);
    scores_.resize(static_cast<size_t>(rows * V_));
    // log p(v) = log (1/M) sum_m exp(log p_m(v)), with the largest term factored out
    const float log_m = std::log(static_cast<float>(M));
    parallel_for(rows * V_, grain_for(kSerialWork, 8 * M), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        float mx = s[0].scores[i];
        for (int64_t m = 1; m < M; ++m) mx = std::max(mx, s[m].scores[i]);
        float sum = std::exp(s[0].scores[i] - mx);  // in all >= 1: the largest term is exp(0)
        for (int64_t m = 1; m < M; ++m) sum += std::exp(s[m].scores[i] - mx);
        scores_[i] = mx + std::log(sum) - log_m;
      }
    });
    Step out{.scores = scores_.data(), .weights = nullptr};
    if (!want_weights_) return out;
    // the mean of the members' attention rows [rows, S], each in the ensemble's source order
    weights_.assign(static_cast<size_t>(rows * S_), 0.f);
    int64_t with = 0;
    for (int64_t m = 0; m < M; ++m) {
      if (s[m].weights == nullptr) continue;
      ++with;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t len = lengths_[r / per_source_];
        const float* w = s[m].weights + r * S_;  // [S]
        float* o = weights_.data() + r * S_;     // [S]
        for (int64_t j = 0; j < len; ++j) o[j] += flipped_[m] ? w[len - 1 - j] : w[j];
      }
    }
    if (with == 0) return out;
    for (float& w : weights_) w /= static_cast<float>(with);
    out.weights = weights_.data();
    return out;
  }

  void reorder(std::span<const int32_t> from) override {
    for (auto& d : members_) d->reorder(from);
  }

  // Online decoding: every member goes on over the longer source (none reads it reversed: no
  // online policy does).
  bool extend_source(const Seq2SeqBatch& longer, bool retake) override {
    if (std::find(flipped_.begin(), flipped_.end(), true) != flipped_.end()) return false;
    if (!members_.front()->extend_source(longer, retake)) return false;
    for (size_t m = 1; m < members_.size(); ++m)
      check(members_[m]->extend_source(longer, retake), "ensemble: model ", m + 1,
            " cannot go on over a longer source, as model 1 does");
    lengths_.assign(longer.src_lengths.begin(), longer.src_lengths.end());
    S_ = longer.S;
    return true;
  }

 private:
  // a graph per member: each decoder rewinds its graph to its encoded state every step
  std::vector<std::unique_ptr<Graph>> graphs_;
  std::vector<std::unique_ptr<IncrementalDecoder>> members_;
  std::vector<bool> flipped_;     // member m reads the sources in the other order
  std::vector<int32_t> lengths_;  // [N] source lengths
  int64_t per_source_, S_, V_;
  bool want_weights_;
  std::vector<float> scores_;   // [rows, V]
  std::vector<float> weights_;  // [rows, S]
};

}  // namespace

Ensemble::Ensemble(std::vector<const Seq2SeqModel*> members) : members_(std::move(members)) {
  check(!members_.empty(), "an ensemble needs at least one model");
  for (size_t m = 0; m < members_.size(); ++m)
    check(members_[m]->frame_labeller() == nullptr, "ensemble: model ", m + 1,
          " is a ctc model, which has no decoder to step with the others (ensembles are of "
          "encoder-decoders)");
  for (size_t m = 1; m < members_.size(); ++m)
    check(members_[m]->tgt_vocab() == members_[0]->tgt_vocab(), "ensemble: model ", m + 1, " has ",
          members_[m]->tgt_vocab(), " target tokens, model 1 has ", members_[0]->tgt_vocab());
}

int64_t Ensemble::tgt_vocab() const {
  return members_[0]->tgt_vocab();
}

bool Ensemble::reverse_source() const {
  return members_[0]->reverse_source();
}

DecoderHeads Ensemble::decoder_heads() const {
  DecoderHeads fewest = members_[0]->decoder_heads();
  for (const auto* m : members_) {
    const DecoderHeads h = m->decoder_heads();
    if (h.heads == 0) return {};
    fewest = {std::min(fewest.layers, h.layers), std::min(fewest.heads, h.heads),
              std::max(fewest.first, h.first)};
  }
  return fewest;
}

OnlinePolicy Ensemble::online_policy() const {
  OnlinePolicy first = members_.front()->online_policy();
  bool same = first.kind == OnlinePolicy::Kind::WaitK;
  for (const Seq2SeqModel* m : members_) {
    const OnlinePolicy p = m->online_policy();
    same = same && p.kind == first.kind && p.k == first.k;
  }
  if (same) return first;
  return {.reason = "an ensemble whose members are not all wait-k with one k"};
}

int64_t Ensemble::max_output_len() const {
  int64_t n = INT64_MAX;
  for (const auto* m : members_) n = std::min(n, m->max_output_len());
  return n;
}

Var Ensemble::loss(Graph& /*g*/, const Seq2SeqBatch& /*batch*/, float /*label_smoothing*/) const {
  fail("an ensemble only decodes: train each of its models on its own");
}

std::unique_ptr<IncrementalDecoder> Ensemble::start_decoding(Graph& g, const Seq2SeqBatch& batch,
                                                             int64_t max_len,
                                                             const AttentionChoice& attention,
                                                             int64_t rows_per_source) const {
  std::vector<std::unique_ptr<Graph>> graphs;
  std::vector<std::unique_ptr<IncrementalDecoder>> decoders;
  std::vector<bool> flipped;
  for (const auto* m : members_) {
    graphs.push_back(std::make_unique<Graph>(g.mode()));
    Graph& mg = *graphs.back();
    flipped.push_back(m->reverse_source() != reverse_source());
    decoders.push_back(
        flipped.back()
            ? m->start_decoding(mg, flip_sources(batch), max_len, attention, rows_per_source)
            : m->start_decoding(mg, batch, max_len, attention, rows_per_source));
  }
  return std::make_unique<EnsembleDecoder>(std::move(graphs), std::move(decoders),
                                           std::move(flipped), batch, rows_per_source, tgt_vocab(),
                                           attention.wanted);
}

}  // namespace heed
