// Batched beam search (see the header).
#include "heed/decode/beam_search.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "heed/autograd/ops.h"
#include "heed/data/vocab.h"
#include "heed/decode/ctc_search.h"
#include "heed/decode/greedy.h"
#include "heed/decode/limits.h"
#include "heed/kernels/reduce.h"
#include "heed/util/error.h"

namespace heed {
namespace {

struct Beam {
  std::vector<int32_t> tokens;
  std::vector<std::vector<float>> attention;
  std::vector<float> token_log_probs;
  double log_prob = 0;
  bool alive = false;
};

}  // namespace

void check_search_options(int64_t beam, int64_t n_best, double length_penalty, double max_len_ratio,
                          int64_t max_length, const SearchOptionNames& n) {
  using namespace limits;
  check(beam >= 1 && beam <= kMaxBeam, n.beam, " must be in 1..", kMaxBeam, ", got ", beam);
  check(n_best >= 1 && n_best <= beam, n.n_best, " must be in 1..", beam, " (", n.beam_short,
        "), got ", n_best);
  check(std::isfinite(length_penalty) && std::abs(length_penalty) <= kMaxLengthPenalty,
        n.length_penalty, " must be in [-", kMaxLengthPenalty, ", ", kMaxLengthPenalty, "], got ",
        length_penalty);
  check(std::isfinite(max_len_ratio) && max_len_ratio > 0 && max_len_ratio <= kMaxLenRatio,
        n.max_len_ratio, " must be in (0, ", kMaxLenRatio, "], got ", max_len_ratio);
  check(max_length >= 0 && max_length <= kMaxLength, n.max_length, " must be in 0..", kMaxLength,
        " (0: by ", n.by_ratio, "), got ", max_length);
}

void check_beam_options(const BeamOptions& o) {
  check_search_options(o.beam, o.n_best, o.length_penalty, o.max_len_ratio, o.max_length,
                       {.beam = "beam size",
                        .n_best = "n-best",
                        .beam_short = "the beam",
                        .length_penalty = "length penalty",
                        .max_len_ratio = "max length ratio",
                        .max_length = "max length",
                        .by_ratio = "the ratio"});
}

int64_t output_limit(const BeamOptions& o, int64_t source_length) {
  const auto by_ratio =
      static_cast<int64_t>(o.max_len_ratio * static_cast<double>(source_length)) + 10;
  return o.max_length > 0 ? std::min(by_ratio, o.max_length) : by_ratio;
}

namespace {
// [N]: each source's output_limit, within what the model can decode
std::vector<int64_t> output_limits(const BeamOptions& o, const Seq2SeqModel& model,
                                   const std::vector<std::vector<int32_t>>& src) {
  std::vector<int64_t> limit;
  limit.reserve(src.size());
  for (const auto& s : src)
    limit.push_back(
        std::min(output_limit(o, static_cast<int64_t>(s.size())), model.max_output_len()));
  return limit;
}
}  // namespace

double normalised_score(const Hypothesis& h, double alpha) {
  double len = static_cast<double>(h.tokens.size() + 1);  // EOS counts
  return alpha == 0 ? h.log_prob : h.log_prob / std::pow(len, alpha);
}

std::vector<std::vector<Hypothesis>> beam_search_n_best(
    const Seq2SeqModel& model, const std::vector<std::vector<int32_t>>& src, const BeamOptions& o,
    const AttentionChoice& attention) {
  check_beam_options(o);
  // each source encoded once; decoder rows n*K .. n*K+K-1 belong to sentence n
  const Seq2SeqBatch b =
      make_batch(src, std::vector<std::vector<int32_t>>(src.size()), model.reverse_source());
  return beam_search_batch(model, b, output_limits(o, model, src), o, attention);
}

std::vector<std::vector<Hypothesis>> beam_search_batch(const Seq2SeqModel& model,
                                                       const Seq2SeqBatch& b,
                                                       std::span<const int64_t> limit,
                                                       const BeamOptions& o,
                                                       const AttentionChoice& attention) {
  check_beam_options(o);
  const int64_t N = b.B, K = o.beam, V = model.tgt_vocab();
  check(static_cast<int64_t>(limit.size()) == N, "beam search: ", limit.size(), " limits for ", N,
        " sources");
  const bool reversed = model.reverse_source();
  const int64_t max_len = limit.empty() ? 0 : *std::max_element(limit.begin(), limit.end());
  Graph g(Mode::Inference);
  auto decoder = model.start_decoding(g, b, max_len, attention, K);
  // the sentences the decoder's rows decode, K rows each (rows a*K .. a*K+K-1: active[a]); a
  // sentence with K finished hypotheses leaves, when the decoder can drop rows
  std::vector<int32_t> active(N);
  for (int64_t n = 0; n < N; ++n) active[n] = static_cast<int32_t>(n);
  std::vector<Beam> beams(N * K);
  for (int64_t n = 0; n < N; ++n) beams[n * K].alive = true;  // one live beam at the start
  std::vector<std::vector<Hypothesis>> finished(N);
  std::vector<int32_t> prev(N * K, Vocab::kBos), going, keep;
  std::vector<int32_t> top(K);  // a live beam's best K tokens (from EOS on) and their scores
  std::vector<float> top_values(K);
  // the decoder's logits, each row normalised by its log-sum-exp where read (log p_v = z_v -
  // log Z), when its log-probabilities are their log-softmax: no row is written again
  const bool logits = decoder->log_probs_are_log_softmax();
  // or, better, each row's best K and its log-sum-exp from the decoder itself, no row made
  const int64_t n_top = std::min<int64_t>(K, V - Vocab::kEos);
  const bool best = decoder->best_k() == n_top;
  const Scores asked = best ? Scores::Best : logits ? Scores::LogitsOnly : Scores::LogProbs;
  for (int64_t t = 0; t < max_len; ++t) {
    check_not_stopped(o.stop);
    IncrementalDecoder::Step step = decoder->step(prev, asked);
    const int64_t A = static_cast<int64_t>(active.size()), rows = A * K;
    const float* lp = step.scores;  // [rows, V]: log-probabilities, or logits (or none: Best)
    const float* w = step.weights;  // [rows, S] or nullptr
    std::vector<int32_t> parent(rows), next(rows, Vocab::kEos);
    std::vector<Beam> fresh(rows);
    going.clear();  // the positions in `active` of the sentences still going
    for (int64_t a = 0; a < A; ++a) {
      const int32_t n = active[a];
      // the best K (score, row, token, log p(token)) continuations of sentence n's live beams
      std::vector<std::tuple<double, int64_t, int32_t, float>> cand;
      for (int64_t k = 0; k < K; ++k) {
        const Beam& bm = beams[a * K + k];
        if (!bm.alive) continue;
        const int64_t r = a * K + k;
        // candidates from EOS on: padding and BOS are never outputs
        const int32_t* ids = top.data();  // the row's best n_top
        const float* value = top_values.data();
        float log_z = 0.f;
        if (best) {  // the decoder's own
          ids = step.best_ids + r * n_top;
          value = step.best_logits + r * n_top;
          log_z = step.log_z[r];
        } else {
          const float* scores = lp + r * V;
          const float* row = scores + Vocab::kEos;
          kernels::top_k(row, V - Vocab::kEos, n_top, top.data());
          for (int64_t i = 0; i < n_top; ++i) {
            top_values[i] = row[top[i]];
            top[i] += Vocab::kEos;
          }
          if (logits) log_z = row_log_z(scores, V, value[0]);
        }
        for (int64_t i = 0; i < n_top; ++i) {
          const float token_lp = value[i] - log_z;
          // the best must be finite, none NaN (which would also break the sort below)
          if (i == 0 || std::isnan(token_lp)) check_step_log_prob(token_lp, t);
          cand.emplace_back(bm.log_prob + token_lp, r, ids[i], token_lp);
        }
      }
      std::stable_sort(cand.begin(), cand.end(), [](const auto& a, const auto& c) {
        return std::get<0>(a) > std::get<0>(c);
      });
      // The K best continuations go on; an ending is kept only when it is among the step's K
      // best candidates (CTranslate2's, Marian's and fairseq's rule): one met further down,
      // while the live beams are still being filled, is dropped, not filed as finished.
      int64_t filled = 0;
      for (size_t i = 0; i < cand.size(); ++i) {
        const auto& [score, r, v, token_lp] = cand[i];
        if (filled == K || static_cast<int64_t>(finished[n].size()) >= K) break;
        const bool ends = v == Vocab::kEos || t + 1 >= limit[n];  // or cut at its own limit
        if (ends && static_cast<int64_t>(i) >= K) continue;
        const Beam& from = beams[r];
        std::vector<float> att;  // row r decodes source n
        if (w) att = source_attention(w, r, b, n, reversed);
        if (ends) {
          Hypothesis h{from.tokens, from.attention, score, from.token_log_probs};
          if (v != Vocab::kEos) h.tokens.push_back(v);
          h.token_log_probs.push_back(token_lp);
          if (w) h.attention.push_back(std::move(att));
          finished[n].push_back(std::move(h));
          continue;
        }
        Beam& nb = fresh[a * K + filled];
        nb = {from.tokens, from.attention, from.token_log_probs, score, true};
        nb.tokens.push_back(v);
        nb.token_log_probs.push_back(token_lp);
        if (w) nb.attention.push_back(std::move(att));
        parent[a * K + filled] = static_cast<int32_t>(r);
        next[a * K + filled] = v;
        ++filled;
      }
      if (static_cast<int64_t>(finished[n].size()) >= K) filled = 0;  // sentence done
      for (int64_t k = filled; k < K; ++k) {
        fresh[a * K + k].alive = false;
        parent[a * K + k] = static_cast<int32_t>(a * K);
      }
      if (filled > 0) going.push_back(static_cast<int32_t>(a));
    }
    if (going.empty()) break;
    beams = std::move(fresh);
    prev = next;
    decoder->reorder(parent);  // the decoder state follows the surviving beams
    if (static_cast<int64_t>(going.size()) == A) continue;
    keep.clear();  // the rows of the sentences still going, ascending
    for (int32_t a : going)
      for (int64_t k = 0; k < K; ++k) keep.push_back(static_cast<int32_t>(a * K + k));
    if (!decoder->drop_rows(keep)) continue;  // this decoder keeps every row
    keep_entries(beams, keep);
    keep_entries(prev, keep);
    keep_entries(active, going);
  }
  for (int64_t n = 0; n < N; ++n) {
    auto& f = finished[n];
    check(!f.empty(), "beam search finished no hypothesis for sentence ", n);
    std::stable_sort(f.begin(), f.end(), [&](const auto& a, const auto& c) {
      return normalised_score(a, o.length_penalty) > normalised_score(c, o.length_penalty);
    });
    if (static_cast<int64_t>(f.size()) > o.n_best) f.resize(o.n_best);
  }
  return finished;
}

namespace {
std::vector<Hypothesis> best_of_each(std::vector<std::vector<Hypothesis>> n_best) {
  std::vector<Hypothesis> out;
  out.reserve(n_best.size());
  for (auto& h : n_best) out.push_back(std::move(h.front()));
  return out;
}
}  // namespace

std::vector<Hypothesis> beam_search(const Seq2SeqModel& model,
                                    const std::vector<std::vector<int32_t>>& src,
                                    const BeamOptions& options, const AttentionChoice& attention) {
  BeamOptions one = options;
  one.n_best = 1;
  return best_of_each(beam_search_n_best(model, src, one, attention));
}

std::vector<std::vector<Hypothesis>> decode_n_best(const Seq2SeqModel& model,
                                                   std::vector<std::vector<int32_t>> src,
                                                   const BeamOptions& o,
                                                   const AttentionChoice& attention) {
  check_beam_options(o);
  check(static_cast<int64_t>(src.size()) * o.beam <= limits::kMaxRows, "a batch of ", src.size(),
        " sentences with a beam of ", o.beam, " is more than ", limits::kMaxRows,
        " rows: decode fewer sentences together");
  if (model.frame_labeller())  // CTC: labels read off every position, no decoder
    return ctc_decode_n_best(model, std::move(src),
                             {.beam = o.beam, .n_best = o.n_best, .lm = o.ctc_lm},
                             attention.wanted);
  for (auto& ids : src)
    if (ids.empty()) ids.push_back(Vocab::kUnk);
  if (o.beam > 1) return beam_search_n_best(model, src, o, attention);
  check(o.n_best == 1, "n-best ", o.n_best, " needs a beam of at least ", o.n_best);
  std::vector<std::vector<int32_t>> none(src.size());
  auto greedy = greedy_decode(model, make_batch(src, none, model.reverse_source()),
                              output_limits(o, model, src), attention, o.stop, o.scores);
  std::vector<std::vector<Hypothesis>> out;
  out.reserve(greedy.size());
  for (auto& h : greedy) out.push_back({std::move(h)});
  return out;
}

std::vector<Hypothesis> decode_batch(const Seq2SeqModel& model,
                                     std::vector<std::vector<int32_t>> src,
                                     const BeamOptions& options, const AttentionChoice& attention) {
  BeamOptions one = options;
  one.n_best = 1;
  return best_of_each(decode_n_best(model, std::move(src), one, attention));
}

}  // namespace heed
