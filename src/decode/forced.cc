// Forced decoding (see the header).
#include "heed/decode/forced.h"

#include <algorithm>

#include "heed/data/vocab.h"
#include "heed/decode/ctc_search.h"
#include "heed/decode/greedy.h"
#include "heed/util/error.h"

namespace heed {

std::vector<Hypothesis> force_decode(const Seq2SeqModel& model,
                                     std::vector<std::vector<int32_t>> src,
                                     const std::vector<std::vector<int32_t>>& tgt,
                                     const AttentionChoice& attention) {
  check(src.size() == tgt.size(), "forced decoding: ", src.size(), " sources but ", tgt.size(),
        " targets");
  if (model.frame_labeller()) return ctc_force_decode(model, std::move(src), tgt, attention.wanted);
  int64_t T = 0;  // positions to step: the longest target and its EOS
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i].empty()) src[i].push_back(Vocab::kUnk);
    T = std::max<int64_t>(T, static_cast<int64_t>(tgt[i].size()) + 1);
  }
  check(T <= model.max_output_len(), "forced decoding: a target of ", T - 1,
        " units is longer than the model's longest output (", model.max_output_len(), ")");
  const auto B = static_cast<int64_t>(src.size());
  std::vector<Hypothesis> out(B);
  if (B == 0) return out;
  const Seq2SeqBatch b =
      make_batch(src, std::vector<std::vector<int32_t>>(src.size()), model.reverse_source());
  Graph g(Mode::Inference);
  auto decoder = model.start_decoding(g, b, T, attention);
  const int64_t V = model.tgt_vocab();
  std::vector<int32_t> prev(B, Vocab::kBos);
  for (int64_t t = 0; t < T; ++t) {
    IncrementalDecoder::Step s = decoder->step(prev, Scores::LogProbs);
    for (int64_t i = 0; i < B; ++i) {
      const auto n = static_cast<int64_t>(tgt[i].size());
      // the given token, then EOS; a finished row steps on with EOS, unread
      const int32_t y = t < n ? tgt[i][t] : Vocab::kEos;
      check(y >= 0 && y < V, "forced decoding: token id ", y, " outside the vocabulary");
      prev[i] = y;
      if (t > n) continue;
      Hypothesis& h = out[i];
      const float lp = s.scores[i * V + y];
      check_step_log_prob(lp, t);
      h.token_log_probs.push_back(lp);
      h.log_prob += lp;
      if (s.weights)
        h.attention.push_back(source_attention(s.weights, i, b, i, model.reverse_source()));
    }
  }
  for (int64_t i = 0; i < B; ++i) out[i].tokens = tgt[i];
  return out;
}

}  // namespace heed
