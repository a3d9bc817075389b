// A speech recognizer's front end: log-mel filterbank frames (data/fbank.h) to the vectors an
// encoder reads, a quarter as many (ESPnet's Conv2dSubsampling; Dong et al. 2018,
// "Speech-Transformer", section 3.1):
//   x'  = (x - mu) / sigma                  [B, S, F]   global mean and deviation per bin,
//                                                       of the training set (stored here)
//   or, with utterance_mean (Kaldi's apply-cmvn per utterance, means only; ESPnet's
//   utterance_mvn without variances: a fixed channel, a voice's or a recording chain's spectral
//   tilt, is a constant per bin in the log domain, and goes):
//   x'  = (x - mean_t(x) - mu) / sigma      mean_t over the utterance's own frames, and mu,
//                                           sigma the training set's after that subtraction
//   h1  = ReLU(conv_3x3/2(x'))             [B, S1, F1, C]   1 -> C channels, stride 2
//   h2  = ReLU(conv_3x3/2(h1))             [B, S2, F2, C]   C -> C, stride 2
//   out = W [h2 over (F2, C)] + b          [S2, B, D]   time-major, as the RNN encoder reads it
// with S1 = (S - 3) / 2 + 1, S2 = (S1 - 3) / 2 + 1 (no padding: frames/4 - 1, 25 a second),
// and so for F. Padding frames (past an utterance's length) are zero after normalisation; an
// output frame counts as real when its window starts inside the utterance.
// Leaves out: the features (data/fbank.h), augmentation (train/), the encoder (nn/).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/autograd/graph.h"
#include "heed/nn/init.h"

namespace heed {

struct AudioFrontEndConfig {
  int64_t features = 80;        // F, filterbank bins
  int64_t channels = 32;        // C
  int64_t dim = 320;            // D
  std::vector<float> mean;      // mu [F]; empty until the trainer sets it (then: none applied)
  std::vector<float> stddev;    // sigma [F]
  bool utterance_mean = false;  // each utterance's mean per bin subtracted first

  // frames after subsampling: ((S - 3) / 2 + 1 - 3) / 2 + 1, and 0 for S < 7
  static int64_t subsampled(int64_t frames);
  static constexpr int64_t kMinFrames = 7;  // the shortest input with an output frame
  // an utterance's frames for the encoder: subsampled() of its frames, padded to kMinFrames
  static int64_t output_frames(int64_t frames) {
    return subsampled(frames < kMinFrames ? kMinFrames : frames);
  }
  // {"features", "channels", "dim", "mean", "stddev", "utterance_mean"} (the last optional: false)
  nlohmann::json to_json() const;
  static AudioFrontEndConfig from_json(const nlohmann::json& j);
  std::string describe() const;  // "conv2d x4 front end (32 channels, 80 bins -> 320)"
};

// The mean of each of F bins over the frames [T, F] (zeros when T = 0).
std::vector<float> bin_means(std::span<const float> frames, int64_t F);

class AudioFrontEnd {
 public:
  AudioFrontEnd(const AudioFrontEndConfig& config, const Scope& scope);
  const AudioFrontEndConfig& config() const { return config_; }
  int64_t width() const { return config_.dim; }  // D
  // features [S, B, F] time-major (padding rows ignored), lengths [B] in 1..S, S >= 7 ->
  // [S2, B, D] time-major; out_lengths [B] gets each utterance's S2 (at least 1)
  Var forward(Graph& g, std::span<const float> features, int64_t S,
              std::span<const int32_t> lengths, std::span<int32_t> out_lengths) const;
  // The same, batch-major: [B, S2, D] (what a Transformer packs)
  Var forward_batch_major(Graph& g, std::span<const float> features, int64_t S,
                          std::span<const int32_t> lengths, std::span<int32_t> out_lengths) const;

 private:
  AudioFrontEndConfig config_;
  Parameter *w1_, *b1_, *w2_, *b2_, *W_, *b_;  // [C, 9], [C], [C, 9 C], [C], [D, F2 C], [D]
};

}  // namespace heed
