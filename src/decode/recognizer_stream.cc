// A recognizer reading a stream of audio as it arrives (see the header).
#include "heed/decode/recognizer_stream.h"

#include <algorithm>
#include <cmath>

#include "heed/data/speech_features.h"
#include "heed/data/vocab.h"
#include "heed/util/error.h"

namespace heed {

RecognizerStream::RecognizerStream(const Recognizer& r, const StreamOptions& o, Clock clock)
    : r_(r),
      o_(o),
      clock_(std::move(clock)),
      fbank_({.num_mel_bins = static_cast<int>(r.bins())}),
      lm_(r.lm(o.lm_weight, o.lm_bonus)) {
  const Seq2SeqModel& model = *r.files().model;
  V_ = model.tgt_vocab();
  if (const FrameLabeller* labeller = model.frame_labeller()) {
    frames_ = labeller->stream();  // an Error for a model that is not causal, naming why
    blank_ = labeller->blank();
  } else {
    // the endpoint: positions heard past the last unit's stop (attention's blank run)
    const auto endpoint =
        static_cast<int64_t>(std::ceil(o.endpoint_seconds / Recognizer::kFrameSeconds - 1e-9));
    attention_ = model.attention_stream(Recognizer::kExtraUnits, std::max<int64_t>(endpoint, 0));
    check(o.beam == 1,
          "transcribe --online: a monotonic attention decoder streams greedily "
          "(--beam 1); the prefix beam is CTC's");
    blank_ = -1;
  }
  check(o.beam >= 1, "transcribe --online: a beam of ", o.beam);
  check(lm_.lm == nullptr || o.beam > 1,
        "--lm: the n-gram model joins the prefix search, which needs a beam of 2 or more (--beam)");
  check(o.endpoint_seconds >= 0, "transcribe --online: a negative endpoint (", o.endpoint_seconds,
        " s)");
  last_class_ = blank_;
  start_search();
}

void RecognizerStream::start_search() {
  if (o_.beam > 1)
    search_ = std::make_unique<CtcPrefixSearch>(
        V_, blank_, CtcBeamOptions{.beam = o_.beam, .lm = lm_.lm ? &lm_ : nullptr});
}

RecognizerStream::~RecognizerStream() = default;

double RecognizerStream::audio_seconds() const {
  return static_cast<double>(samples_read_) / Recognizer::kSampleRate;
}

std::vector<int32_t> RecognizerStream::best() const {
  return search_ ? search_->best() : path_labels_;
}

std::vector<int32_t> RecognizerStream::stable() const {
  return search_ ? search_->stable() : path_labels_;  // the best path never takes a label back
}

nlohmann::json to_json(const StreamResult& r) {
  nlohmann::json j = {
      {"type", r.final ? "final" : "partial"}, {"segment", r.segment}, {"text", r.text}};
  if (r.final) {
    j["start"] = r.start;
    j["end"] = r.end;
    j["log_prob"] = r.log_prob;
    nlohmann::json words = nlohmann::json::array();
    for (const WordTime& w : r.words)
      words.push_back({{"word", w.word},
                       {"start", w.start},
                       {"end", w.end},
                       {"emitted", w.emitted},
                       {"read", w.read}});
    j["words"] = std::move(words);
  } else {
    j["stable"] = r.stable;
  }
  j["audio"] = r.audio;
  return j;
}

std::vector<StreamResult> RecognizerStream::push(std::span<const float> samples, StreamView* view) {
  std::vector<StreamResult> out;
  samples_.insert(samples_.end(), samples.begin(), samples.end());
  samples_read_ += static_cast<int64_t>(samples.size());
  // the whole frames among the samples held; the rest waits for the next push
  const int64_t n = fbank_.frames(static_cast<int64_t>(samples_.size()));
  if (n > 0) {
    const int64_t used = (n - 1) * fbank_.frame_shift() + fbank_.frame_length();
    const std::vector<float> features =
        kaldi_fbank(fbank_, {samples_.data(), static_cast<size_t>(used)});
    samples_.erase(samples_.begin(), samples_.begin() + n * fbank_.frame_shift());
    if (view) view->frames.insert(view->frames.end(), features.begin(), features.end());
    if (attention_)
      take(attention_->push(features), out, view);
    else
      read_scores(frames_->push(features), out, view);
  }
  // the labels that became stable in this push were given out now
  stamp();
  if (o_.partials && best() != shown_) out.push_back(partial());
  return out;
}

void RecognizerStream::read_scores(const std::vector<float>& scores, std::vector<StreamResult>& out,
                                   StreamView* view) {
  if (view) {
    view->scores.insert(view->scores.end(), scores.begin(), scores.end());
    view->positions += static_cast<int64_t>(scores.size()) / V_;
  }
  for (size_t i = 0; i < scores.size(); i += static_cast<size_t>(V_))
    position(scores.data() + i, out);
}

void RecognizerStream::position(const float* y, std::vector<StreamResult>& out) {
  ++positions_;
  scores_.insert(scores_.end(), y, y + V_);
  const auto top = static_cast<int32_t>(std::max_element(y, y + V_) - y);
  if (search_) {
    search_->advance(y);
  } else if (top != blank_ && top != last_class_) {
    path_labels_.push_back(top);  // merge repeats, drop blanks
  }
  last_class_ = top;
  blank_run_ = top == blank_ ? blank_run_ + 1 : 0;
  // the endpoint: a long enough blank run after a label (best() is looked at only then)
  if (o_.endpoint_seconds > 0 &&
      static_cast<double>(blank_run_) * Recognizer::kFrameSeconds >= o_.endpoint_seconds &&
      !best().empty()) {
    stamp();
    end_segment(out);
  }
}

void RecognizerStream::stamp() {
  const size_t now_stable = stable().size();
  if (now_stable <= emitted_.size()) return;
  emitted_.resize(now_stable, clock_());
  read_.resize(now_stable, audio_seconds());
}

StreamResult RecognizerStream::partial() {
  const ModelFiles& m = r_.files();
  StreamResult p;
  p.segment = segment_;
  p.text = m.tgt_seg.join(m.tgt_vocab.decode(best()));
  p.stable = m.tgt_seg.join(m.tgt_vocab.decode(stable()));
  p.audio = audio_seconds();
  shown_ = best();
  return p;
}

void RecognizerStream::end_segment(std::vector<StreamResult>& out) {
  const ModelFiles& m = r_.files();
  const int64_t T = static_cast<int64_t>(scores_.size()) / V_;
  StreamResult f;
  f.final = true;
  f.segment = segment_;
  f.audio = audio_seconds();
  f.start = static_cast<double>(segment_start_) * Recognizer::kFrameSeconds;
  f.end = static_cast<double>(segment_start_ + T) * Recognizer::kFrameSeconds;
  if (T > 0) {
    // the answer over the segment's positions, as decoding them whole gives it
    Hypothesis h = std::move(ctc_decode_frames(scores_.data(), T, V_, blank_,
                                               {.beam = o_.beam, .lm = lm_.lm ? &lm_ : nullptr},
                                               /*attention=*/true)
                                 .front());
    const std::vector<std::string> spelled = m.tgt_vocab.decode(h.tokens);
    f.text = m.tgt_seg.join(spelled);
    f.log_prob = h.log_prob;
    // a unit given out as stable keeps its moment; any other (the final rescoring's) is now's
    const std::vector<int32_t> held = stable();
    std::vector<double> emitted(spelled.size(), clock_()), read(spelled.size(), audio_seconds());
    for (size_t k = 0; k < spelled.size() && k < held.size() && k < emitted_.size(); ++k) {
      if (held[k] != h.tokens[k]) break;
      emitted[k] = emitted_[k];
      read[k] = read_[k];
    }
    f.words = word_times(spelled, unit_frames(h, spelled.size(), /*ctc=*/true),
                         Recognizer::kFrameSeconds, emitted, read);
    for (WordTime& w : f.words) {
      w.start += f.start;
      w.end += f.start;
    }
  }
  out.push_back(std::move(f));
  any_final_ = true;
  // a new segment: the search starts again, the encoder goes on
  ++segment_;
  segment_start_ = positions_;
  scores_.clear();
  path_labels_.clear();
  emitted_.clear();
  read_.clear();
  shown_.clear();
  blank_run_ = 0;
  start_search();
}

void RecognizerStream::take(const std::vector<AttentionStream::Token>& tokens,
                            std::vector<StreamResult>& out, StreamView* view) {
  for (const AttentionStream::Token& t : tokens) {
    if (t.id == Vocab::kEos) {  // the segment ends
      end_attention_segment(t.stop + 1, out);
      continue;
    }
    path_labels_.push_back(t.id);  // written for good: stable at once
    stops_.push_back(t.stop);
    emitted_.push_back(clock_());
    read_.push_back(audio_seconds());
    log_prob_ += t.log_prob;
  }
  if (view) {
    for (const AttentionStream::Token& t : tokens)
      if (t.id != Vocab::kEos) view->tokens.push_back(t);
    view->positions += attention_->positions() - positions_;
  }
  positions_ = attention_->positions();
}

void RecognizerStream::end_attention_segment(int64_t end, std::vector<StreamResult>& out) {
  const ModelFiles& m = r_.files();
  StreamResult f;
  const std::vector<std::string> spelled = m.tgt_vocab.decode(path_labels_);
  f.text = m.tgt_seg.join(spelled);
  // a final, unless the segment wrote no word (a pause's word boundary) and is not the stream's
  // only one
  if (f.text.find_first_not_of(' ') == std::string::npos && (any_final_ || !finishing_)) {
    start_attention_segment(end);
    return;
  }
  f.final = true;
  f.segment = segment_;
  f.audio = audio_seconds();
  f.start = static_cast<double>(segment_start_) * Recognizer::kFrameSeconds;
  f.end = static_cast<double>(end) * Recognizer::kFrameSeconds;
  f.log_prob = log_prob_;
  std::vector<std::pair<int64_t, int64_t>> frames;  // a unit's frames: its attention's stop
  for (int64_t stop : stops_) frames.emplace_back(stop, stop);  // (from the stream's start)
  f.words = word_times(spelled, frames, Recognizer::kFrameSeconds, emitted_, read_);
  out.push_back(std::move(f));
  any_final_ = true;
  ++segment_;
  start_attention_segment(end);
}

void RecognizerStream::start_attention_segment(int64_t start) {
  segment_start_ = start;
  path_labels_.clear();
  stops_.clear();
  emitted_.clear();
  read_.clear();
  shown_.clear();
  log_prob_ = 0;
}

std::vector<StreamResult> RecognizerStream::finish(StreamView* view) {
  std::vector<StreamResult> out;
  samples_.clear();  // less than a frame: as decoding the whole (snip_edges) drops it
  if (attention_) {
    finishing_ = true;
    take(attention_->finish(), out, view);
    if (!any_final_) end_attention_segment(positions_, out);  // (no audio: nothing heard)
    return out;
  }
  read_scores(frames_->finish(), out, view);
  stamp();
  // the last segment, unless it is the blank tail after an endpoint
  if (!any_final_ || !best().empty()) end_segment(out);
  return out;
}

}  // namespace heed
