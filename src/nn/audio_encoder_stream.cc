// A recognizer's listener over a stream of frames (see the header).
#include "heed/nn/audio_encoder_stream.h"

#include <algorithm>

#include "heed/util/error.h"

namespace heed {

namespace {
// A front end position's window of frames, and the frames between two positions' windows
constexpr int64_t kWindow = AudioFrontEndConfig::kMinFrames, kStride = 4;
}  // namespace

AudioEncoderStream::AudioEncoderStream(const AudioFrontEnd& front, const SequenceEncoder& encoder)
    : front_(front), F_(front.config().features), D_(encoder.width()) {
  check(!front.config().utterance_mean,
        "this recognizer subtracts each utterance's mean (--utterance-mean), which needs the "
        "whole utterance before its first frame; a streaming one is trained without it");
  encoder_ = encoder.stream_vectors();
}

std::vector<float> AudioEncoderStream::push(std::span<const float> features) {
  check(static_cast<int64_t>(features.size()) % F_ == 0, "audio stream: ", features.size(),
        " values are not frames of ", F_, " bins");
  pending_.insert(pending_.end(), features.begin(), features.end());
  const int64_t S = frames(), n = AudioFrontEndConfig::subsampled(S);  // windows complete
  if (n == 0) return {};
  std::vector<float> h = encode(S, (n - 1) * kStride + kWindow);
  pending_.erase(pending_.begin(), pending_.begin() + n * kStride * F_);
  return h;
}

std::vector<float> AudioEncoderStream::finish() {
  const int64_t S = frames();
  std::vector<float> h;
  if (fed_ == 0 && S > 0) {  // shorter than a window: zero frames after it, as offline
    pending_.resize(static_cast<size_t>(kWindow * F_), 0.f);
    h = encode(S, kWindow);
  }
  pending_.clear();
  g_.clear();
  append(encoder_->finish(g_), h);  // the positions a chunked encoder held
  return h;
}

std::vector<float> AudioEncoderStream::encode(int64_t real, int64_t span) {
  g_.clear();
  const auto length = static_cast<int32_t>(std::min(real, span));
  int32_t out_length = 0;
  const Var x = front_.forward(g_, {pending_.data(), static_cast<size_t>(span * F_)}, span,
                               {&length, 1}, {&out_length, 1});  // [n, 1, D]
  fed_ += x.dim(0);
  std::vector<float> h;
  append(encoder_->push(g_, x), h);  // [1, m, H]
  return h;
}

void AudioEncoderStream::append(Var states, std::vector<float>& out) {
  if (!states.valid()) return;  // none complete
  const Tensor& h = states.value();
  encoded_ += h.dim(1);
  out.insert(out.end(), h.data(), h.data() + h.numel());
}

}  // namespace heed
