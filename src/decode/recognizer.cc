// The speech recognizer's inference API (see the header).
#include "heed/decode/recognizer.h"

#include <algorithm>

#include "heed/data/fbank.h"
#include "heed/data/speech_features.h"
#include "heed/data/text.h"
#include "heed/decode/beam_search.h"
#include "heed/decode/greedy.h"
#include "heed/nn/audio_front_end.h"
#include "heed/util/error.h"

namespace heed {

Recognizer::Recognizer(const std::string& dir, const DecodeOverrides& overrides,
                       ComputeType compute)
    : m_(load_model(dir, overrides)) {
  check(m_->audio, dir, ": not a speech recognizer (its config.json reads ",
        m_->config.value("src_units", std::string("?")), " units, not audio)");
  try {
    bins_ = m_->config.at("audio").at("features").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    fail(dir, "/config.json: no audio front end (", e.what(), ")");
  }
  m_->params.prepare_for_inference(compute == ComputeType::Int8);
}

void Recognizer::load_lm(const std::string& arpa) {
  auto lm = std::make_shared<NgramLm>(NgramLm::read_arpa(arpa));
  std::vector<int32_t> ids;
  size_t known = 0;
  for (int32_t c = 0; c < m_->tgt_vocab.size(); ++c) {
    ids.push_back(c <= Vocab::kUnk ? NgramLm::kUnk : lm->id(m_->tgt_vocab.token(c)));
    known += ids.back() != NgramLm::kUnk ? 1 : 0;
  }
  check(known > 0, "--lm ", arpa, ": none of the model's output units is among its words");
  lm_ = std::move(lm);
  lm_ids_ = std::move(ids);
}

namespace {

// One utterance's filterbanks; an Error when it is shorter than a frame.
std::vector<float> utterance_features(const Fbank& fbank, std::span<const float> audio) {
  std::vector<float> f = kaldi_fbank(fbank, audio);
  check(!f.empty(), "transcribe: an utterance of ", audio.size(),
        " samples is shorter than one 25 ms frame");
  return f;
}

}  // namespace

std::vector<float> Recognizer::features(std::span<const float> audio) const {
  return utterance_features(Fbank({.num_mel_bins = static_cast<int>(bins_)}), audio);
}

std::vector<std::vector<Transcript>> Recognizer::transcribe(
    const std::vector<std::span<const float>>& audio, const RecognizeOptions& o) const {
  // one filterbank for the call (its FFT is per thread)
  const Fbank fbank({.num_mel_bins = static_cast<int>(bins_)});
  std::vector<std::vector<float>> features;
  features.reserve(audio.size());
  for (std::span<const float> a : audio) features.push_back(utterance_features(fbank, a));
  return transcribe_features({features.begin(), features.end()}, o);
}

std::vector<std::pair<int64_t, int64_t>> unit_frames(const Hypothesis& h, size_t units, bool ctc) {
  std::vector<std::pair<int64_t, int64_t>> span(units, {-1, -1});
  if (ctc) {
    for (size_t t = 0; t < h.path.size(); ++t) {
      const auto k = static_cast<size_t>(h.path[t]);
      if (k >= units) continue;
      if (span[k].first < 0) span[k].first = static_cast<int64_t>(t);
      span[k].second = static_cast<int64_t>(t);
    }
  } else {
    for (size_t k = 0; k < units && k < h.attention.size(); ++k) {
      const int64_t at = attended_position(h.attention[k]);
      span[k] = {at, at};
    }
  }
  return span;
}

namespace {

// Per unit and then </s> (CTC: the blank) its row over the model frames: the attention, or 1
// where CTC's best path is in that row.
std::vector<std::vector<float>> alignment_rows(const Hypothesis& h, size_t units, bool ctc) {
  if (!ctc) return h.attention;
  std::vector<std::vector<float>> rows(units + 1, std::vector<float>(h.path.size(), 0.f));
  for (size_t t = 0; t < h.path.size(); ++t)
    rows[std::min(static_cast<size_t>(h.path[t]), units)][t] = 1.f;
  return rows;
}

}  // namespace

std::vector<WordTime> word_times(const std::vector<std::string>& units,
                                 const std::vector<std::pair<int64_t, int64_t>>& frames,
                                 double frame_seconds, std::span<const double> emitted,
                                 std::span<const double> read) {
  std::vector<WordTime> words;
  WordTime w;
  int64_t begin = -1, end = -1;
  auto close = [&]() {
    if (!w.word.empty())
      words.push_back({w.word, static_cast<double>(std::max<int64_t>(begin, 0)) * frame_seconds,
                       static_cast<double>(end + 1) * frame_seconds, w.emitted, w.read});
    w = {};
    begin = end = -1;
  };
  for (size_t k = 0; k < units.size(); ++k) {
    // a character model's space, or a SentencePiece piece that starts a word
    const bool space = units[k] == kSpaceUnit;
    const bool starts = units[k].rfind(kSpaceUnit, 0) == 0;
    if (space || starts) close();
    if (space) continue;
    w.word += starts ? units[k].substr(kSpaceUnit.size()) : units[k];
    if (frames[k].first >= 0 && (begin < 0 || frames[k].first < begin)) begin = frames[k].first;
    end = std::max(end, frames[k].second);
    if (k < emitted.size()) w.emitted = std::max(w.emitted, emitted[k]);
    if (k < read.size()) w.read = std::max(w.read, read[k]);
  }
  close();
  return words;
}

std::vector<std::vector<Hypothesis>> recognize_batch(const Seq2SeqModel& model,
                                                     const Seq2SeqBatch& b,
                                                     const RecognizeOptions& o, const CtcLm* lm) {
  if (model.frame_labeller())
    return ctc_decode_batch(model, b, {.beam = o.beam, .n_best = o.n_best, .lm = lm},
                            o.timestamps || o.alignment);
  // an attention decoder: up to a character per model frame, and 10 more
  std::vector<int64_t> limits;
  for (int32_t n : b.src_lengths)
    limits.push_back(AudioFrontEndConfig::output_frames(n) + Recognizer::kExtraUnits);
  const AttentionChoice choice{.wanted = o.timestamps || o.alignment};
  if (o.beam > 1)
    return beam_search_batch(model, b, limits,
                             {.beam = o.beam, .length_penalty = 1.0, .n_best = o.n_best}, choice);
  std::vector<std::vector<Hypothesis>> out;
  for (Hypothesis& h : greedy_decode(model, b, limits, choice)) out.push_back({std::move(h)});
  return out;
}

std::vector<std::vector<Transcript>> Recognizer::transcribe_features(
    const std::vector<std::span<const float>>& features, const RecognizeOptions& o) const {
  check(o.batch >= 1, "transcribe: a batch of ", o.batch);
  const CtcLm lm{.lm = lm_.get(), .ids = lm_ids_, .weight = o.lm_weight, .bonus = o.lm_bonus};
  check(!lm_ || o.beam > 1,
        "--lm: the n-gram model joins the prefix search, which needs a beam "
        "of 2 or more (--beam)");
  // similar lengths together; the answers in the input's order
  std::vector<size_t> order(features.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return features[a].size() < features[b].size(); });
  std::vector<std::vector<Transcript>> out(features.size());
  for (size_t i = 0; i < order.size(); i += static_cast<size_t>(o.batch)) {
    const size_t n = std::min(order.size() - i, static_cast<size_t>(o.batch));
    std::vector<std::span<const float>> frames;
    for (size_t k = 0; k < n; ++k) {
      const std::span<const float> f = features[order[i + k]];
      check(!f.empty() && static_cast<int64_t>(f.size()) % bins_ == 0, "transcribe: ", f.size(),
            " feature values are not frames of the model's ", bins_, " bins");
      frames.push_back(f);
    }
    const Seq2SeqBatch b = make_audio_batch(frames, bins_, std::vector<std::vector<int32_t>>(n),
                                            AudioFrontEndConfig::kMinFrames);
    const bool ctc = m_->model->frame_labeller() != nullptr;
    std::vector<std::vector<Hypothesis>> hyps =
        recognize_batch(*m_->model, b, o, lm_ ? &lm : nullptr);
    for (size_t k = 0; k < n; ++k)
      for (Hypothesis& h : hyps[k]) {
        const std::vector<std::string> units = m_->tgt_vocab.decode(h.tokens);
        Transcript t;
        t.text = m_->tgt_seg.join(units);
        t.log_prob = h.log_prob;
        if (o.timestamps)
          t.words = word_times(units, unit_frames(h, units.size(), ctc), kFrameSeconds);
        if (o.alignment) {
          t.alignment = alignment_rows(h, units.size(), ctc);
          t.units = units;
        }
        out[order[i + k]].push_back(std::move(t));
      }
  }
  return out;
}

nlohmann::json to_json(const std::vector<Transcript>& n_best, bool timestamps) {
  check(!n_best.empty(), "to_json: no transcript");
  auto one = [&](const Transcript& t) {
    nlohmann::json r = {{"text", t.text}, {"log_prob", t.log_prob}};
    if (timestamps) {
      nlohmann::json words = nlohmann::json::array();
      for (const WordTime& w : t.words) {
        words.push_back({{"word", w.word}, {"start", w.start}, {"end", w.end}});
        if (w.emitted >= 0) words.back()["emitted"] = w.emitted;
        if (w.read >= 0) words.back()["read"] = w.read;
      }
      r["words"] = std::move(words);
    }
    return r;
  };
  nlohmann::json answer = one(n_best.front());
  if (n_best.size() > 1) {
    nlohmann::json list = nlohmann::json::array();
    for (const Transcript& t : n_best) list.push_back(one(t));
    answer["n_best"] = std::move(list);
  }
  return answer;
}

}  // namespace heed
