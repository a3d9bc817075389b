// The inference API of a speech recognizer: a trained model's directory (models/model_files.h,
// config.json's src_units "audio"), audio in, transcripts out. heed transcribe, Python's
// heed.Recognizer and heed serve's POST /transcribe all run this.
//   samples (16 kHz mono, full scale 1) -> Kaldi filterbanks (data/fbank.h) -> the model's
//   front end and encoder -> CTC search (decode/ctc_search.h: best path, or the prefix beam
//   with an n-gram LM) -> units joined into text.
// Word timestamps come from the most probable alignment of the transcript: a model frame is
// 40 ms (the front end subsamples the 10 ms frames by 4); a word starts at the first frame of
// its first unit and ends after the last frame of its last one.
// Leaves out: reading files (io/audio.h), streaming (audio that arrives in pieces).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/decode/compute_type.h"
#include "heed/decode/ctc_search.h"
#include "heed/models/model_files.h"
#include "heed/models/ngram_lm.h"

namespace heed {

struct RecognizeOptions {
  int beam = 1;             // 1: the best path; more: the prefix beam search
  int n_best = 1;           // transcripts per utterance (<= beam)
  double lm_weight = 0.5;   // with an LM (load_lm): w ln p_lm in the beam's score
  double lm_bonus = 0.0;    // with an LM: added per output unit
  bool timestamps = false;  // each word's start and end
  bool alignment = false;   // each unit's row over the model frames (Transcript::alignment)
  int64_t batch = 16;       // utterances decoded together
};

// A batch of frames (models/seq2seq.h make_audio_batch) decoded as a recognizer decodes it: a
// CTC model's best path or prefix beam (with `lm`), an attention decoder's greedy or beam search
// up to one unit per model frame and 10 more (joint CTC-attention scores when the model has a
// CTC head). Per row its n best, best first; attention rows (or CTC's path) with timestamps.
std::vector<std::vector<Hypothesis>> recognize_batch(const Seq2SeqModel& model,
                                                     const Seq2SeqBatch& batch,
                                                     const RecognizeOptions& options,
                                                     const CtcLm* lm = nullptr);

struct WordTime {
  std::string word;
  double start = 0, end = 0;  // seconds
  double emitted = -1;        // a stream's: when its last unit was given out (-1: not streamed)
  double read = -1;           // a stream's: the audio read by then (seconds)
};

// Each unit's first and last model frame (-1 when none): CTC's best alignment (h.path: per
// frame the unit's index, or `units` for the blank), or an attention model's most attended frame.
std::vector<std::pair<int64_t, int64_t>> unit_frames(const Hypothesis& h, size_t units, bool ctc);
// The words of units (a character model's spaces between them, or SentencePiece pieces that
// begin one) with their times: a word starts at its first unit's first frame and ends after its
// last unit's last one; with `emitted` and `read` (per unit), a word's are its last unit's.
std::vector<WordTime> word_times(const std::vector<std::string>& units,
                                 const std::vector<std::pair<int64_t, int64_t>>& frames,
                                 double frame_seconds, std::span<const double> emitted = {},
                                 std::span<const double> read = {});

struct Transcript {
  std::string text;
  double log_prob = 0;          // log p(units | audio)
  std::vector<WordTime> words;  // with RecognizeOptions::timestamps
  // with RecognizeOptions::alignment: the units, and per unit and then </s> (CTC: <blank>) its
  // weights over the utterance's model frames [units + 1][frames] — an attention decoder's
  // attention, CTC's most probable alignment (1 where the path is in that unit's row)
  std::vector<std::string> units;
  std::vector<std::vector<float>> alignment;
};

// One utterance's answer as heed transcribe's JSON lines and POST /transcribe give it: the best
// transcript's {"text", "log_prob"}, its "words" [{word, start, end}] when `timestamps`, and with
// more than one hypothesis an "n_best" list of the same objects, best first.
nlohmann::json to_json(const std::vector<Transcript>& n_best, bool timestamps);

class Recognizer {
 public:
  // The weights prepared for decoding once, here: int8 copies (`compute`), or float32
  // transposes (ParameterStore::prepare_for_inference).
  explicit Recognizer(const std::string& dir, const DecodeOverrides& overrides = {},
                      ComputeType compute = ComputeType::Float32);
  const ModelFiles& files() const { return *m_; }
  // An ARPA n-gram model of the output units (heed lm over the training transcripts, in the
  // model's units) joins the prefix beam search (beam >= 2) from now on.
  void load_lm(const std::string& arpa);
  // The loaded LM for the prefix search with this weight and bonus (lm null when none).
  CtcLm lm(double weight, double bonus) const {
    return {.lm = lm_.get(), .ids = lm_ids_, .weight = weight, .bonus = bonus};
  }
  static constexpr int kSampleRate = 16000;
  static constexpr double kFrameSeconds = 0.04;  // one model frame: 4 feature frames of 10 ms
  // an attention decoder writes up to a unit per model frame, and this many more
  static constexpr int64_t kExtraUnits = 10;
  // The model's filterbanks of one utterance (samples at 16 kHz, full scale 1): [frames, bins]
  std::vector<float> features(std::span<const float> audio) const;
  int64_t bins() const { return bins_; }
  // Per utterance (samples at 16 kHz, full scale 1), its n best transcripts, best first.
  std::vector<std::vector<Transcript>> transcribe(const std::vector<std::span<const float>>& audio,
                                                  const RecognizeOptions& options) const;
  // The same from features already computed ([frames, bins] each, the model's bins).
  std::vector<std::vector<Transcript>> transcribe_features(
      const std::vector<std::span<const float>>& features, const RecognizeOptions& options) const;

 private:
  std::unique_ptr<ModelFiles> m_;
  int64_t bins_ = 80;
  std::shared_ptr<const NgramLm> lm_;
  std::vector<int32_t> lm_ids_;  // the model's unit -> the LM's word id
};

}  // namespace heed
