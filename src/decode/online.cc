// Online greedy decoding (see the header).
#include "heed/decode/online.h"

#include <algorithm>

#include "heed/data/vocab.h"
#include "heed/decode/greedy.h"
#include "heed/kernels/vmath.h"
#include "heed/util/error.h"

namespace heed {

OnlineOutput online_decode(const Seq2SeqModel& model, std::span<const int32_t> src, int64_t max_len,
                           const std::function<void(int32_t, int64_t)>& write) {
  const OnlinePolicy policy = model.online_policy();
  check(!model.frame_labeller(), "online decoding: not for CTC models");
  const auto n = static_cast<int64_t>(src.size());
  check(n >= 1, "online decoding: an empty source");
  max_len = std::min(max_len, model.max_output_len());
  const int64_t V = model.tgt_vocab();
  OnlineOutput out;
  // the decoder over the prefix read so far, at the tokens written
  int64_t read = policy.kind == OnlinePolicy::Kind::ReadAll ? n
                 : policy.kind == OnlinePolicy::Kind::WaitK ? std::min(policy.k, n)
                                                            : 1;
  std::unique_ptr<Graph> g;
  std::unique_ptr<IncrementalDecoder> decoder;
  Seq2SeqBatch prefix;
  auto restart = [&] {
    g = std::make_unique<Graph>(Mode::Inference);
    decoder = model.start_decoding(*g, prefix, max_len, {});
    int32_t prev = Vocab::kBos;
    for (int32_t token : out.tokens) {  // the tokens written, fed back as before
      decoder->step({&prev, 1}, Scores::None);
      prev = token;
    }
  };
  auto make_prefix = [&] {
    prefix = make_batch({std::vector<int32_t>(src.begin(), src.begin() + read)}, {{}},
                        model.reverse_source());
  };
  // READ one more token: the decoder goes on over the longer prefix (taking its last step back
  // first when that step ran off the prefix), or, when it cannot, a new one replays the tokens
  auto read_one = [&](bool retake) {
    ++read;
    make_prefix();
    if (!decoder->extend_source(prefix, retake)) restart();
  };
  make_prefix();
  restart();
  while (true) {
    const auto i = static_cast<int64_t>(out.tokens.size());
    if (i >= max_len) break;  // cut at the length limit, as greedy decoding
    if (policy.kind == OnlinePolicy::Kind::WaitK && read < std::min(i + policy.k, n)) {
      read_one(false);  // wait-k: READ until i + k tokens
      continue;
    }
    const int32_t prev = i == 0 ? Vocab::kBos : out.tokens.back();
    const IncrementalDecoder::Step s = decoder->step({&prev, 1}, Scores::LogProbs);
    check(s.weights != nullptr, "online decoding: the model reports no attention");
    if (policy.kind == OnlinePolicy::Kind::Monotonic && read < n && s.ran_off) {
      read_one(true);  // the decoder ran off the prefix: READ, and take this step again
      continue;
    }
    const auto best =
        static_cast<int32_t>(Vocab::kEos + vmath::argmax(s.scores + Vocab::kEos, V - Vocab::kEos));
    check_step_log_prob(s.scores[best], i);
    out.log_prob += s.scores[best];
    std::vector<float> row = source_attention(s.weights, 0, prefix, 0, model.reverse_source());
    row.resize(static_cast<size_t>(n), 0.f);  // over the whole source: 0 where not read yet
    out.attention.push_back(std::move(row));
    if (best == Vocab::kEos) break;
    out.tokens.push_back(best);
    out.delays.push_back(read);
    if (write) write(best, read);
  }
  return out;
}

}  // namespace heed
