// Greedy decoding (see the header).
#include "heed/decode/greedy.h"

#include <algorithm>
#include <cmath>

#include "heed/data/vocab.h"
#include "heed/kernels/softmax.h"
#include "heed/kernels/vmath.h"
#include "heed/util/error.h"

namespace heed {

// search skips the ids below EOS: padding and BOS
static_assert(Vocab::kPad < Vocab::kEos && Vocab::kBos < Vocab::kEos && Vocab::kUnk > Vocab::kEos);

void check_step_log_prob(float log_prob, int64_t t) {
  check(std::isfinite(log_prob), "decoding: the model's scores are not finite at output step ",
        t + 1, ": its weights overflow the arithmetic (a corrupt or diverged model)");
}

float row_log_z(const float* logits, int64_t V, float best) {
  return kernels::log_sum_exp(logits, V, vmath::max(logits, Vocab::kEos, best));
}

std::vector<Hypothesis> greedy_decode(const Seq2SeqModel& model, const Seq2SeqBatch& b,
                                      std::span<const int64_t> limits,
                                      const AttentionChoice& attention,
                                      const std::atomic<bool>* stop, bool scores) {
  check(static_cast<int64_t>(limits.size()) == b.B, "greedy decoding: ", limits.size(),
        " length limits for ", b.B, " sentences");
  std::vector<int64_t> limit(b.B);  // [B]: each sentence's, within what the model can decode
  int64_t max_len = 0;
  for (int64_t i = 0; i < b.B; ++i) {
    limit[i] = std::min(limits[i], model.max_output_len());
    max_len = std::max(max_len, limit[i]);
  }
  Graph g(Mode::Inference);
  auto decoder = model.start_decoding(g, b, max_len, attention);
  std::vector<Hypothesis> out(b.B);
  // the decoder's rows: the sentence each decodes and its last output; a row whose sentence has
  // ended is dropped when the decoder can (the rows left are renumbered), else skipped
  std::vector<int32_t> sentence(b.B), prev(b.B, Vocab::kBos), keep;
  for (int64_t i = 0; i < b.B; ++i) sentence[i] = static_cast<int32_t>(i);
  std::vector<bool> done(b.B);
  for (int64_t i = 0; i < b.B; ++i) done[i] = limit[i] <= 0;
  const int64_t V = model.tgt_vocab();
  // What a step gives, best first: each row's best token and log-sum-exp from the decoder itself
  // (no [B, V] row made: the Transformer reads its output layer in blocks that stay in cache);
  // else its logits, normalised at the one entry taken (log p = z - log Z), when the
  // log-probabilities are their log-softmax; else the log-probabilities (ensembles, joint CTC).
  // Without scores, the best token alone: no row normalised.
  const bool best = decoder->best_k() == 1;
  const bool logits = !best && decoder->log_probs_are_log_softmax();
  const Scores asked = best     ? (scores ? Scores::Best : Scores::Argmax)
                       : logits ? Scores::LogitsOnly
                                : Scores::LogProbs;
  for (int64_t t = 0; t < max_len; ++t) {
    check_not_stopped(stop);
    IncrementalDecoder::Step s = decoder->step(prev, asked);
    keep.clear();
    for (int64_t r = 0; r < static_cast<int64_t>(sentence.size()); ++r) {
      const int32_t i = sentence[r];
      if (done[i]) continue;
      // padding and BOS are never outputs (a model gives them a little mass all the same)
      int32_t token = 0;
      float log_prob = 0.f;
      if (best) {
        token = s.best_ids[r];
        log_prob = s.best_logits[r] - (scores ? s.log_z[r] : 0.f);  // (else the logit, checked)
      } else {
        const float* row = s.scores + r * V;  // [V]
        token =
            static_cast<int32_t>(Vocab::kEos + vmath::argmax(row + Vocab::kEos, V - Vocab::kEos));
        log_prob = row[token];
        if (logits && scores) log_prob -= row_log_z(row, V, row[token]);
      }
      check_step_log_prob(log_prob, t);
      prev[r] = token;
      Hypothesis& h = out[i];
      if (scores) {
        h.log_prob += log_prob;
        h.token_log_probs.push_back(log_prob);
      }
      if (s.weights)
        h.attention.push_back(source_attention(s.weights, r, b, i, model.reverse_source()));
      if (token == Vocab::kEos) {
        done[i] = true;
      } else {
        h.tokens.push_back(token);
        done[i] = t + 1 >= limit[i];  // cut at its own limit
      }
      if (!done[i]) keep.push_back(static_cast<int32_t>(r));
    }
    if (keep.empty()) break;
    if (keep.size() < sentence.size() && decoder->drop_rows(keep)) {
      keep_entries(sentence, keep);
      keep_entries(prev, keep);
    }
  }
  return out;
}

std::vector<Hypothesis> greedy_decode(const Seq2SeqModel& model, const Seq2SeqBatch& b,
                                      int64_t max_len, const AttentionChoice& attention) {
  return greedy_decode(model, b, std::vector<int64_t>(b.B, max_len), attention);
}

}  // namespace heed
