// CTC decoding (see the header).
#include "heed/decode/ctc_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "heed/data/vocab.h"
#include "heed/kernels/ctc.h"
#include "heed/models/ngram_lm.h"
#include "heed/util/error.h"

namespace heed {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double log_add(double a, double b) {
  if (a < b) std::swap(a, b);
  if (b == kNegInf) return a;
  return a + std::log1p(std::exp(b - a));
}

constexpr double kLn10 = 2.302585092994046;

// One labelling on frames lp [T, C] (kernels/ctc.h with B = 1), its forward variables run:
// alpha [T, 2L + 1] and nll = -log p(labels | x).
struct Lattice {
  int32_t t32, l32;
  kernels::CtcBatch p;
  std::vector<float> alpha;
  float nll = 0;
  Lattice(const float* lp, int64_t T, int64_t C, int32_t blank, const std::vector<int32_t>& labels)
      : t32(static_cast<int32_t>(T)),
        l32(static_cast<int32_t>(labels.size())),
        p{.B = 1,
          .T = T,
          .C = C,
          .L = l32,
          .input_lengths = &t32,
          .targets = labels.data(),
          .target_lengths = &l32,
          .blank = blank},
        alpha(static_cast<size_t>(T * kernels::ctc_states(p))) {
    kernels::ctc_alpha(p, lp, alpha.data(), &nll);
  }
  Lattice(const Lattice&) = delete;
  Lattice& operator=(const Lattice&) = delete;
};

// The LM's ids of a prefix's last order - 1 labels, <s> before the first.
std::vector<int32_t> lm_context(const CtcLm& m, const std::vector<int32_t>& prefix) {
  const size_t keep = static_cast<size_t>(m.lm->order() - 1);
  std::vector<int32_t> h;
  if (prefix.size() < keep) h.push_back(NgramLm::kBos);
  for (size_t i = prefix.size() > keep ? prefix.size() - keep : 0; i < prefix.size(); ++i)
    h.push_back(m.ids[static_cast<size_t>(prefix[i])]);
  return h;
}

// w ln p_lm(c | prefix) + b for every class c, then for </s> (the last entry).
std::vector<double> lm_step(const CtcLm& m, const std::vector<int32_t>& prefix) {
  const std::vector<int32_t> h = lm_context(m, prefix);
  std::vector<double> out;
  out.reserve(m.ids.size() + 1);
  for (int32_t id : m.ids) out.push_back(m.weight * kLn10 * m.lm->log10_prob(h, id) + m.bonus);
  out.push_back(m.weight * kLn10 * m.lm->log10_prob(h, NgramLm::kEos));
  return out;
}

}  // namespace

double ctc_lm_score(const CtcLm* m, const std::vector<int32_t>& labels) {
  if (m == nullptr || m->lm == nullptr) return 0;
  double score = 0;
  std::vector<int32_t> prefix;
  for (int32_t c : labels) {
    score += m->weight * kLn10 * m->lm->log10_prob(lm_context(*m, prefix), m->ids[c]) + m->bonus;
    prefix.push_back(c);
  }
  return score + m->weight * kLn10 * m->lm->log10_prob(lm_context(*m, prefix), NgramLm::kEos);
}

std::vector<int32_t> ctc_best_path(const float* log_probs, int64_t T, int64_t C, int32_t blank) {
  std::vector<int32_t> labels;
  int32_t prev = blank;
  for (int64_t t = 0; t < T; ++t) {
    const float* row = log_probs + t * C;
    const auto best = static_cast<int32_t>(std::max_element(row, row + C) - row);
    if (best != blank && best != prev) labels.push_back(best);  // merge repeats, drop blanks
    prev = best;
  }
  return labels;
}

double CtcPrefixSearch::Score::total() const {
  return log_add(blank, label);
}

CtcPrefixSearch::CtcPrefixSearch(int64_t C, int32_t blank, const CtcBeamOptions& o)
    : C_(C),
      blank_(blank),
      beam_(o.beam),
      lm_(o.lm != nullptr && o.lm->lm != nullptr ? o.lm : nullptr) {
  check(o.beam >= 1 && o.n_best >= 1 && o.n_best <= o.beam,
        "CTC beam search: the n-best must be in 1..beam (", o.beam, "), got ", o.n_best);
  check(lm_ == nullptr || static_cast<int64_t>(lm_->ids.size()) == C,
        "CTC beam search: the LM maps ", lm_ ? lm_->ids.size() : 0, " classes, the model has ", C);
  beams_.emplace(std::vector<int32_t>{}, Score{.blank = 0.0});  // the empty prefix, probability 1
}

const std::vector<double>& CtcPrefixSearch::lm_of(const std::vector<int32_t>& prefix) {
  auto it = lm_steps_.find(prefix);
  if (it == lm_steps_.end()) it = lm_steps_.emplace(prefix, lm_step(*lm_, prefix)).first;
  return it->second;
}

void CtcPrefixSearch::advance(const float* y) {
  Prefixes next;
  for (const auto& [prefix, score] : beams_) {
    const double total = score.total();
    const std::vector<double>* lm_next = lm_ ? &lm_of(prefix) : nullptr;
    // a blank: the same prefix, now ending in a blank
    Score& same = next[prefix];
    same.blank = log_add(same.blank, total + y[blank_]);
    same.lm = score.lm;
    for (int32_t c = 0; c < C_; ++c) {
      if (c == blank_) continue;
      std::vector<int32_t> longer = prefix;
      longer.push_back(c);
      if (!prefix.empty() && c == prefix.back()) {
        // its last label again: merged into the same prefix, unless a blank came between
        same.label = log_add(same.label, score.label + y[c]);
        Score& ext = next[longer];
        ext.label = log_add(ext.label, score.blank + y[c]);
        ext.lm = score.lm + (lm_next ? (*lm_next)[static_cast<size_t>(c)] : 0.0);
      } else {
        Score& ext = next[longer];
        ext.label = log_add(ext.label, total + y[c]);
        ext.lm = score.lm + (lm_next ? (*lm_next)[static_cast<size_t>(c)] : 0.0);
      }
    }
  }
  // the K most probable (ties: the map's order, lexicographic in the ids)
  std::vector<Prefixes::iterator> order;
  for (auto it = next.begin(); it != next.end(); ++it) order.push_back(it);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a->second.ranked() > b->second.ranked();
  });
  Prefixes kept;
  for (size_t k = 0; k < order.size() && k < static_cast<size_t>(beam_); ++k)
    kept.insert(*order[k]);
  beams_ = std::move(kept);
  // the LM's rows of prefixes no longer kept are not needed again (a prefix never comes back)
  if (lm_ && lm_steps_.size() > 64 * static_cast<size_t>(beam_)) lm_steps_.clear();
}

std::vector<int32_t> CtcPrefixSearch::best() const {
  // the first of the highest-ranked (the map's order breaks ties); the beams are never empty
  return std::max_element(
             beams_.begin(), beams_.end(),
             [](const auto& a, const auto& b) { return a.second.ranked() < b.second.ranked(); })
      ->first;
}

std::vector<int32_t> CtcPrefixSearch::stable() const {
  const std::vector<int32_t>& first = beams_.begin()->first;
  size_t n = first.size();
  for (const auto& [prefix, score] : beams_) {
    size_t k = 0;
    while (k < n && k < prefix.size() && prefix[k] == first[k]) ++k;
    n = k;
  }
  return {first.begin(), first.begin() + static_cast<std::ptrdiff_t>(n)};
}

std::vector<CtcHypothesis> CtcPrefixSearch::finish(const float* log_probs, int64_t T,
                                                   int n_best) const {
  // The kept prefixes and the best path's labelling (which the pruning can lose: the search then
  // never answers worse than best path), ranked by their exact probabilities.
  Prefixes all = beams_;
  all.try_emplace(ctc_best_path(log_probs, T, C_, blank_));
  std::vector<CtcHypothesis> out;
  for (const auto& [prefix, score] : all) {
    const double log_p = ctc_log_prob(log_probs, T, C_, blank_, prefix);
    out.push_back({prefix, log_p, log_p + ctc_lm_score(lm_, prefix)});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.score > b.score; });
  out.resize(std::min(out.size(), static_cast<size_t>(n_best)));
  return out;
}

std::vector<CtcHypothesis> ctc_prefix_beam_search(const float* log_probs, int64_t T, int64_t C,
                                                  int32_t blank, const CtcBeamOptions& o) {
  CtcPrefixSearch search(C, blank, o);
  for (int64_t t = 0; t < T; ++t) search.advance(log_probs + t * C);
  return search.finish(log_probs, T, o.n_best);
}

double ctc_log_prob(const float* log_probs, int64_t T, int64_t C, int32_t blank,
                    const std::vector<int32_t>& labels) {
  return -double{Lattice(log_probs, T, C, blank, labels).nll};
}

std::vector<int32_t> ctc_best_alignment(const float* lp, int64_t T, int64_t C, int32_t blank,
                                        const std::vector<int32_t>& labels) {
  const auto L = static_cast<int64_t>(labels.size()), S = 2 * L + 1;
  auto label = [&](int64_t s) { return s % 2 == 0 ? blank : labels[static_cast<size_t>(s / 2)]; };
  if (T == 0 || !ctc_alignable(T, labels)) return {};
  // delta_t(s) = max over the paths into (t, s) of their log-probability (eq. 7 with max for
  // sum); from[t][s] the state at t - 1 it came from
  std::vector<double> delta(static_cast<size_t>(S), kNegInf), next(delta.size());
  std::vector<int32_t> from(static_cast<size_t>(T * S), 0);
  delta[0] = lp[blank];
  if (S > 1) delta[1] = lp[label(1)];
  for (int64_t t = 1; t < T; ++t) {
    for (int64_t s = 0; s < S; ++s) {
      int64_t best = s;
      if (s >= 1 && delta[s - 1] > delta[best]) best = s - 1;
      if (s >= 2 && s % 2 == 1 && label(s) != label(s - 2) && delta[s - 2] > delta[best])
        best = s - 2;
      next[s] = delta[best] + lp[t * C + label(s)];
      from[t * S + s] = static_cast<int32_t>(best);
    }
    std::swap(delta, next);
  }
  std::vector<int32_t> path(static_cast<size_t>(T));
  int64_t s = S > 1 && delta[S - 2] > delta[S - 1] ? S - 2 : S - 1;
  for (int64_t t = T - 1; t >= 0; --t) {
    path[static_cast<size_t>(t)] = static_cast<int32_t>(s);
    s = from[t * S + s];
  }
  return path;
}

namespace {

// The picture of `labels` on frames lp [T, C] (K frames per source unit): per label, and then
// for the blank, the posterior occupancy summed over each unit's frames, normalised.
std::vector<std::vector<float>> alignment_rows(const float* lp, int64_t T, int64_t C, int32_t blank,
                                               int64_t K, const std::vector<int32_t>& labels) {
  const Lattice l(lp, T, C, blank, labels);
  const int64_t W = kernels::ctc_states(l.p), units = T / K;
  std::vector<float> beta(l.alpha.size()), gamma(l.alpha.size());
  kernels::ctc_state_posteriors(l.p, lp, l.alpha.data(), &l.nll, beta.data(), gamma.data());
  std::vector<std::vector<float>> rows(labels.size() + 1, std::vector<float>(units, 0.f));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s < W; ++s) {
      auto& row = s % 2 == 1 ? rows[static_cast<size_t>(s / 2)] : rows.back();  // label or blank
      row[static_cast<size_t>(t / K)] += gamma[t * W + s];
    }
  for (auto& row : rows) {
    double total = 0;
    for (float v : row) total += v;
    if (total > 0)
      for (float& v : row) v = static_cast<float>(v / total);
  }
  return rows;
}

// The picture of `labels` on frames lp [T, C] (K per source unit): the rows (alignment_rows)
// and the path.
void picture(const float* lp, int64_t T, int64_t C, int32_t blank, int64_t K,
             const std::vector<int32_t>& labels, Hypothesis& h) {
  h.attention = alignment_rows(lp, T, C, blank, K, labels);
  for (int32_t s : ctc_best_alignment(lp, T, C, blank, labels))
    h.path.push_back(s % 2 == 1 ? s / 2 : static_cast<int32_t>(labels.size()));
}

// One row of a batch: its frames' log-probabilities lp [T, C] and the model's labeller.
struct Row {
  const float* lp;
  int64_t T, C;
  const FrameLabeller& m;
};

// Scores a batch (ids or frames) and calls each(b, row) for every row b.
template <class Each>
void for_each_row(const Seq2SeqModel& model, const Seq2SeqBatch& batch, Each each) {
  const FrameLabeller* labeller = model.frame_labeller();
  check(labeller != nullptr, "CTC decoding: the model is not an alignment-free one");
  Graph g(Mode::Inference);
  const FrameScores f = labeller->frame_log_probs(g, batch);
  const int64_t T = f.log_probs.dim(1), C = f.log_probs.dim(2);
  for (int64_t b = 0; b < batch.B; ++b)
    each(static_cast<size_t>(b), Row{f.log_probs.value().data() + b * T * C,
                                     f.lengths[static_cast<size_t>(b)], C, *labeller});
}

// A batch of id sources (an empty one read as <unk>), targets none.
Seq2SeqBatch source_batch(const Seq2SeqModel& model, std::vector<std::vector<int32_t>> src) {
  for (auto& ids : src)
    if (ids.empty()) ids.push_back(Vocab::kUnk);
  std::vector<std::vector<int32_t>> none(src.size());
  return make_batch(src, none, model.reverse_source());
}

}  // namespace

std::vector<Hypothesis> ctc_decode_frames(const float* lp, int64_t T, int64_t C, int32_t blank,
                                          const CtcBeamOptions& o, bool attention,
                                          int64_t upsample) {
  std::vector<CtcHypothesis> found;
  if (o.beam == 1) {
    std::vector<int32_t> best = ctc_best_path(lp, T, C, blank);
    const double log_p = ctc_log_prob(lp, T, C, blank, best);
    found.push_back({std::move(best), log_p, log_p});
  } else {
    found = ctc_prefix_beam_search(lp, T, C, blank, o);
  }
  std::vector<Hypothesis> out;
  for (CtcHypothesis& c : found) {
    Hypothesis h;
    h.log_prob = c.log_prob;
    if (attention) picture(lp, T, C, blank, upsample, c.labels, h);
    h.tokens = std::move(c.labels);
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<std::vector<Hypothesis>> ctc_decode_batch(const Seq2SeqModel& model,
                                                      const Seq2SeqBatch& batch,
                                                      const CtcBeamOptions& o, bool attention) {
  check(o.beam > 1 || o.n_best == 1, "n-best ", o.n_best, " needs a beam of at least ", o.n_best);
  std::vector<std::vector<Hypothesis>> out(static_cast<size_t>(batch.B));
  for_each_row(model, batch, [&](size_t b, const Row& r) {
    out[b] = ctc_decode_frames(r.lp, r.T, r.C, r.m.blank(), o, attention, r.m.upsample());
  });
  return out;
}

std::vector<std::vector<Hypothesis>> ctc_decode_n_best(const Seq2SeqModel& model,
                                                       std::vector<std::vector<int32_t>> src,
                                                       const CtcBeamOptions& o, bool attention) {
  if (src.empty()) return {};
  return ctc_decode_batch(model, source_batch(model, std::move(src)), o, attention);
}

std::vector<Hypothesis> ctc_force_decode(const Seq2SeqModel& model,
                                         std::vector<std::vector<int32_t>> src,
                                         const std::vector<std::vector<int32_t>>& tgt,
                                         bool attention) {
  check(src.size() == tgt.size(), "forced decoding: ", src.size(), " sources but ", tgt.size(),
        " targets");
  std::vector<Hypothesis> out(src.size());
  if (src.empty()) return out;
  for_each_row(model, source_batch(model, std::move(src)), [&](size_t b, const Row& r) {
    for (int32_t y : tgt[b])
      check(y > r.m.blank() && y < r.C, "forced decoding: token id ", y, " is not a label");
    Hypothesis& h = out[b];
    h.tokens = tgt[b];
    h.log_prob = ctc_log_prob(r.lp, r.T, r.C, r.m.blank(), tgt[b]);
    if (attention) picture(r.lp, r.T, r.C, r.m.blank(), r.m.upsample(), tgt[b], h);
  });
  return out;
}

}  // namespace heed
