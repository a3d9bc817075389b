// A recognizer reading one stream of audio as it arrives (heed transcribe --online; the server's
// streaming route), for a causal CTC model (`heed train --model ctc --unidirectional`), or a
// monotonic attention one (below):
//   samples in pieces of any size (16 kHz, full scale 1)
//   -> Kaldi filterbank frames (data/fbank.h), each as soon as its 25 ms window is whole
//   -> the model's positions (FrameLabeller::Stream: each computed once, when its front end's
//      window of 7 frames is whole; one every 40 ms, 85 ms of audio each)
//   -> the CTC search, one position at a time (decode/ctc_search.h: the best path, or the
//      prefix beam with its n-gram LM)
//   -> partial results: the best labels so far, and their stable part, which no later audio
//      changes (best path: all of it; the beam: what every kept prefix begins with)
//   -> a final result per segment: the search's answer over the segment's positions — what
//      Recognizer::transcribe gives for the same audio whole —, each word with its times and the
//      moment its last unit was given out (on the caller's clock). A segment ends with the
//      stream, or (endpointing) once the best path has been blank for `endpoint_seconds`
//      after a label; the encoder goes on across segments, the search starts again.
// Memory and cost per second are flat in the stream's length: the encoder keeps its state,
// a segment its positions' scores (what its final answer is rescored on), nothing else grows.
// A recognizer with hard monotonic attention or MoChA over a causal encoder (`heed train --model
// rnn --attention mocha --unidirectional`) streams too (Seq2SeqModel::attention_stream): its
// decoder writes each unit once its attention stops on audio heard, and never takes one back,
// so a partial result is stable whole; greedy (joint CTC-MoChA with the recognizer's
// --ctc-lookahead), each word timed by its units' attention stops. Without endpointing its
// stream is one segment whose final = Recognizer::transcribe's; with it, a segment ends when
// the decoder writes </s> before the audio ends, or once `endpoint_seconds` were heard past its
// last unit's stop (attention's blank run; units written while the stop stays put do not
// count), and a new decoder starts after it; a segment that wrote no word is no final. Memory and
// cost per second are flat here too: the decoder keeps the positions its attention can still
// read (models/rnn_seq2seq.cc, HeardMemory).
// Leaves out: reading audio (cli/, serve/), the offline recognizer (decode/recognizer.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "heed/data/fbank.h"
#include "heed/decode/ctc_search.h"
#include "heed/decode/recognizer.h"
#include "heed/models/seq2seq.h"

namespace heed {

struct StreamOptions {
  int beam = 1;                 // 1: the best path; more: the prefix beam search
  double lm_weight = 0.5;       // with the recognizer's LM (Recognizer::load_lm; beam >= 2)
  double lm_bonus = 0.0;        // per output unit, with the LM
  double endpoint_seconds = 0;  // a blank run this long after a label ends a segment (0: never;
                                // attention: this long heard past the last unit's stop)
  bool partials = true;         // give a partial result whenever the best labels change
};

struct StreamResult {
  bool final = false;
  int64_t segment = 0;          // 0, 1, ... in the stream
  std::string text;             // partial: the best labels so far; final: the segment's answer
  std::string stable;           // partial: the beginning of text no later audio changes
  double audio = 0;             // seconds of audio read when it was given
  double start = 0, end = 0;    // final: the segment's span, seconds from the stream's start
  double log_prob = 0;          // final: log p(labels | the segment's audio)
  std::vector<WordTime> words;  // final: seconds from the stream's start, and their emission
};

// The JSON of a result, as `heed transcribe --online` and the server's streaming route write it:
//   {"type": "partial", "segment", "text", "stable", "audio"}
//   {"type": "final", "segment", "text", "start", "end", "log_prob",
//    "words": [{"word", "start", "end", "emitted", "read"}], "audio"}
nlohmann::json to_json(const StreamResult& r);

// What one push (or the stream's finish) computed, for showing it as it grows (the server's
// page): the new filterbank frames (10 ms each), how many model positions (40 ms each) they
// made, and what the model read off them: a CTC model each position's log-probabilities, an
// attention one the units it wrote, each with the position its attention stopped on.
struct StreamView {
  std::vector<float> frames;                   // [n, bins] log-mel energies
  int64_t positions = 0;                       // model positions computed
  std::vector<float> scores;                   // CTC: [positions, V] log p(unit | position)
  std::vector<AttentionStream::Token> tokens;  // attention: the units written
};

class RecognizerStream {
 public:
  using Clock = std::function<double()>;  // the caller's time now, in seconds
  // An Error when the recognizer's model cannot read a stream (not causal).
  RecognizerStream(const Recognizer& recognizer, const StreamOptions& options, Clock clock);
  ~RecognizerStream();
  RecognizerStream(const RecognizerStream&) = delete;
  RecognizerStream& operator=(const RecognizerStream&) = delete;

  // The next samples; the results they bring (a partial when the best labels changed, the
  // finals of segments they ended), in order. With a view, what they computed is appended to it.
  std::vector<StreamResult> push(std::span<const float> samples, StreamView* view = nullptr);
  // The stream's end: the last segment's final (one final at least per stream); with a view,
  // what the audio's tail computed.
  std::vector<StreamResult> finish(StreamView* view = nullptr);

  double audio_seconds() const;                     // read so far
  int64_t bins() const { return fbank_.bins(); }    // a frame's
  int32_t blank() const { return blank_; }          // the CTC blank's unit
  int64_t units() const { return V_; }              // the model's output units
  int64_t positions() const { return positions_; }  // model positions computed so far
  // the positions the current segment holds (what its final answer is computed over)
  int64_t held_positions() const { return static_cast<int64_t>(scores_.size()) / V_; }

 private:
  void position(const float* y, std::vector<StreamResult>& out);  // one position's scores [V]
  void end_segment(std::vector<StreamResult>& out);
  StreamResult partial();  // and remembers what it showed
  std::vector<int32_t> best() const;
  std::vector<int32_t> stable() const;
  void start_search();  // the segment's search, from nothing
  // an attention stream's units, appended to the view's when there is one; the finals of the
  // segments they end
  void take(const std::vector<AttentionStream::Token>& tokens, std::vector<StreamResult>& out,
            StreamView* view);
  // a CTC model's positions' scores [n, V], the same
  void read_scores(const std::vector<float>& scores, std::vector<StreamResult>& out,
                   StreamView* view);
  // at position `end`: its final (none for a segment of no word, but the stream's only one)
  void end_attention_segment(int64_t end, std::vector<StreamResult>& out);
  void start_attention_segment(int64_t start);  // at `start`

  const Recognizer& r_;
  StreamOptions o_;
  Clock clock_;
  Fbank fbank_;
  std::unique_ptr<FrameLabeller::Stream> frames_;  // a CTC model's, or
  std::unique_ptr<AttentionStream> attention_;     // a monotonic attention one's
  std::vector<int64_t> stops_;                     // attention: each unit's stop
  double log_prob_ = 0;                            // attention: the units'
  CtcLm lm_;
  int64_t V_;
  int32_t blank_;
  std::vector<float> samples_;  // those not yet in a whole frame, on the stream's clock from
  int64_t samples_read_ = 0;    // all the stream's
  int64_t positions_ = 0;       // all the stream's
  // the segment
  int64_t segment_ = 0, segment_start_ = 0;  // its number and first position
  std::vector<float> scores_;                // [T, V] its positions' log-probabilities
  std::unique_ptr<CtcPrefixSearch> search_;  // beam >= 2
  std::vector<int32_t> path_labels_;         // best path: its labels so far
  int32_t last_class_ = 0;                   // best path: the last position's class
  int64_t blank_run_ = 0;                    // positions since the best path's last label
  std::vector<double> emitted_, read_;       // per stable label: when it was given out, and
                                             // the audio read by then
  void stamp();                              // the labels stable now and not yet: given out now
  std::vector<int32_t> shown_;               // the best labels of the last partial
  bool any_final_ = false;
  bool finishing_ = false;  // in finish()
};

}  // namespace heed
