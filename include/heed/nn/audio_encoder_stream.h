// A recognizer's listener reading one utterance's feature frames as they arrive: the front end
// (nn/audio_front_end.h) and a causal encoder (SequenceEncoder::stream_vectors) over the frames
// pushed so far, each 40 ms position computed once. Position j of the front end reads frames
// 4j .. 4j + 6 (two 3x3 convolutions of stride 2, no padding), so a push runs the front end over
// the windows it completes (3 frames of overlap with the last) and the encoder's stream over
// their vectors; finish() gives an utterance shorter than one window its one position, zero
// frames after it, as encoding it whole does, and the positions a chunked encoder still holds.
// The states equal the whole utterance's.
// The streams of CTC (models/ctc.cc) and of monotonic attention (models/rnn_seq2seq.cc) read it.
// Leaves out: what reads the states (an output layer, an attention decoder).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "heed/autograd/graph.h"
#include "heed/nn/audio_front_end.h"
#include "heed/nn/sequence_encoder.h"

namespace heed {

class AudioEncoderStream {
 public:
  // An Error when the encoder is not causal, or the front end subtracts each utterance's mean
  // (which needs the whole utterance before its first frame).
  AudioEncoderStream(const AudioFrontEnd& front, const SequenceEncoder& encoder);
  // frames [n, F] -> the states [m, D] of the m positions they complete (m may be 0; a chunked
  // encoder's come a chunk at a time)
  std::vector<float> push(std::span<const float> features);
  // the utterance's end: the states of a position not given yet (an utterance shorter than a
  // window), or none
  std::vector<float> finish();
  int64_t width() const { return D_; }            // D
  int64_t positions() const { return encoded_; }  // encoded so far

 private:
  int64_t frames() const { return static_cast<int64_t>(pending_.size()) / F_; }
  // the front end over pending_'s first `span` frames (`real` of them audio), then the encoder
  std::vector<float> encode(int64_t real, int64_t span);
  // the encoder's states [1, m, H] (an invalid Var: none) after `out`
  void append(Var states, std::vector<float>& out);

  const AudioFrontEnd& front_;
  int64_t F_, D_;
  std::unique_ptr<SequenceEncoder::Stream> encoder_;
  Graph g_{Mode::Inference};
  std::vector<float> pending_;  // [frames, F]: from frame 4 fed_ on
  int64_t fed_ = 0;             // positions given to the encoder
  int64_t encoded_ = 0;         // positions it gave back (fewer while a chunk is incomplete)
};

}  // namespace heed
