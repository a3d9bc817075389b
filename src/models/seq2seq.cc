// Batches shared by every encoder-decoder (see the header).
#include "heed/models/seq2seq.h"

#include <algorithm>

#include "heed/autograd/ops.h"
#include "heed/data/vocab.h"
#include "heed/nn/audio_front_end.h"
#include "heed/util/error.h"

namespace heed {

std::unique_ptr<FrameLabeller::Stream> FrameLabeller::stream() const {
  fail(
      "this model does not read a stream: a streaming recognizer is a ctc model with audio in "
      "and a --unidirectional encoder");
}

std::unique_ptr<AttentionStream> Seq2SeqModel::attention_stream(int64_t /*slack*/,
                                                                int64_t /*endpoint*/) const {
  fail(
      "this model does not read a stream: a streaming attention recognizer is an rnn model with "
      "audio in, --attention monotonic or mocha and a --unidirectional encoder");
}

int64_t attended_position(std::span<const float> weights) {
  if (weights.empty()) return 0;
  const auto best = std::max_element(weights.begin(), weights.end());
  return *best > 0.f ? best - weights.begin() : static_cast<int64_t>(weights.size()) - 1;
}

std::vector<float> source_attention(const float* weights, int64_t row, const Seq2SeqBatch& b,
                                    int64_t source, bool reversed) {
  const int64_t S = b.F > 0 ? AudioFrontEndConfig::subsampled(b.S) : b.S;
  const int64_t n = b.F > 0 ? std::min(S, AudioFrontEndConfig::output_frames(b.src_lengths[source]))
                            : b.src_lengths[source];
  const float* w = weights + row * S;  // [S]
  std::vector<float> a(w, w + n);
  if (reversed) std::reverse(a.begin(), a.end());
  return a;
}

std::vector<int32_t> target_lengths(const Seq2SeqBatch& b) {
  std::vector<int32_t> len(b.B, 0);
  for (int64_t t = 0; t < b.T; ++t)
    for (int64_t i = 0; i < b.B; ++i) len[i] += b.tgt_out[t * b.B + i] != Vocab::kPad;
  return len;
}

namespace {

// tgt_in = BOS y, tgt_out = y EOS, padded to the longest target plus one
void fill_targets(Seq2SeqBatch& b, const std::vector<std::vector<int32_t>>& tgt) {
  for (const auto& t : tgt) b.T = std::max<int64_t>(b.T, static_cast<int64_t>(t.size()) + 1);
  b.tgt_in.assign(b.T * b.B, Vocab::kPad);
  b.tgt_out.assign(b.T * b.B, Vocab::kPad);
  for (int64_t i = 0; i < b.B; ++i) {
    const auto& t = tgt[i];
    b.tgt_in[i] = Vocab::kBos;
    for (size_t k = 0; k < t.size(); ++k) {
      b.tgt_in[(k + 1) * b.B + i] = t[k];
      b.tgt_out[k * b.B + i] = t[k];
    }
    b.tgt_out[t.size() * b.B + i] = Vocab::kEos;
    b.target_tokens += static_cast<int64_t>(t.size()) + 1;
  }
}

}  // namespace

Seq2SeqBatch make_batch(const std::vector<std::vector<int32_t>>& src,
                        const std::vector<std::vector<int32_t>>& tgt, bool reverse_source) {
  check(src.size() == tgt.size() && !src.empty(), "make_batch: ", src.size(), " sources and ",
        tgt.size(), " targets");
  Seq2SeqBatch b;
  b.B = static_cast<int64_t>(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    check(!src[i].empty(), "make_batch: empty source sequence ", i);
    b.S = std::max<int64_t>(b.S, static_cast<int64_t>(src[i].size()));
  }
  b.src.assign(b.S * b.B, Vocab::kPad);
  for (int64_t i = 0; i < b.B; ++i) {
    const auto& s = src[i];
    auto n = static_cast<int64_t>(s.size());
    b.src_lengths.push_back(static_cast<int32_t>(n));
    for (int64_t k = 0; k < n; ++k) b.src[k * b.B + i] = reverse_source ? s[n - 1 - k] : s[k];
  }
  fill_targets(b, tgt);
  return b;
}

Seq2SeqBatch make_audio_batch(const std::vector<std::span<const float>>& frames, int64_t bins,
                              const std::vector<std::vector<int32_t>>& tgt, int64_t min_frames) {
  check(frames.size() == tgt.size() && !frames.empty() && bins > 0,
        "make_audio_batch: ", frames.size(), " utterances and ", tgt.size(), " targets of ", bins,
        " bins");
  Seq2SeqBatch b;
  b.B = static_cast<int64_t>(frames.size());
  b.F = bins;
  b.S = min_frames;
  for (const auto& f : frames) {
    check(!f.empty() && static_cast<int64_t>(f.size()) % bins == 0, "make_audio_batch: ", f.size(),
          " values are not frames of ", bins, " bins");
    b.S = std::max<int64_t>(b.S, static_cast<int64_t>(f.size()) / bins);
  }
  b.features.assign(static_cast<size_t>(b.S * b.B * bins), 0.f);
  for (int64_t i = 0; i < b.B; ++i) {
    const int64_t n = static_cast<int64_t>(frames[i].size()) / bins;
    b.src_lengths.push_back(static_cast<int32_t>(n));
    for (int64_t t = 0; t < n; ++t)
      std::copy_n(frames[i].data() + t * bins, bins, b.features.data() + (t * b.B + i) * bins);
  }
  fill_targets(b, tgt);
  return b;
}

CtcTargets ctc_targets(Graph& g, const Seq2SeqBatch& b) {
  const int64_t B = b.B, L = std::max<int64_t>(b.T - 1, 1);
  int32_t* labels = g.arena().array<int32_t>(static_cast<size_t>(B * L));
  int32_t* lengths = g.arena().array<int32_t>(static_cast<size_t>(B));
  std::fill_n(labels, B * L, Vocab::kPad);
  for (int64_t i = 0; i < B; ++i) {
    int32_t n = 0;
    for (int64_t t = 0; t < b.T; ++t) {
      const int32_t y = b.tgt_out[t * B + i];
      if (y == Vocab::kEos || y == Vocab::kPad) break;
      labels[i * L + n++] = y;
    }
    lengths[i] = n;
  }
  return {{labels, static_cast<size_t>(B * L)}, {lengths, static_cast<size_t>(B)}};
}

bool ctc_alignable(int64_t positions, std::span<const int32_t> labels) {
  auto needed = static_cast<int64_t>(labels.size());
  for (size_t i = 1; i < labels.size(); ++i) needed += labels[i] == labels[i - 1] ? 1 : 0;
  return positions >= needed;
}

Var repeat_rows(Var x, int64_t k) {
  if (k == 1) return x;
  const Shape& s = x.shape();
  const int64_t N = s[0], row = s.numel() / std::max<int64_t>(N, 1);
  Graph& g = x.graph();
  int32_t* ids = g.arena().array<int32_t>(static_cast<size_t>(N * k));
  for (int64_t i = 0; i < N * k; ++i) ids[i] = static_cast<int32_t>(i / k);
  // a row gather is an embedding lookup of the rows [N, row]
  Var y = embedding(reshape(x, Shape{N, row}),
                    std::span<const int32_t>(ids, static_cast<size_t>(N * k)), Shape{N * k});
  return reshape(y, s.with(0, N * k));
}

std::span<const int32_t> repeat_rows(Graph& g, std::span<const int32_t> lengths, int64_t k) {
  const auto n = static_cast<size_t>(static_cast<int64_t>(lengths.size()) * k);
  int32_t* out = g.arena().array<int32_t>(n);
  for (size_t i = 0; i < n; ++i) out[i] = lengths[i / static_cast<size_t>(k)];
  return {out, n};
}

}  // namespace heed
