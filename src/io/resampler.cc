// A streaming rate converter (see the header).
#include "heed/io/resampler.h"

#include <samplerate.h>

#include <cmath>

#include "heed/util/error.h"

namespace heed {

struct StreamResampler::State {
  SRC_STATE* src = nullptr;
  ~State() {
    if (src != nullptr) src_delete(src);
  }
};

StreamResampler::StreamResampler(int from_rate, int to_rate, std::string name,
                                 ResampleQuality quality)
    : from_(from_rate), to_(to_rate), name_(std::move(name)) {
  for (int r : {from_rate, to_rate})
    check(r >= 1000 && r <= 768000, name_, ": a rate of ", r, " Hz (1000..768000)");
  if (!converts()) return;
  state_ = std::make_unique<State>();
  int err = 0;
  state_->src = src_new(quality == ResampleQuality::best     ? SRC_SINC_BEST_QUALITY
                        : quality == ResampleQuality::medium ? SRC_SINC_MEDIUM_QUALITY
                                                             : SRC_SINC_FASTEST,
                        1, &err);
  check(state_->src != nullptr, name_, ": no resampler (", src_strerror(err), ")");
}

StreamResampler::~StreamResampler() = default;

std::vector<float> StreamResampler::push(std::span<const float> samples, bool end) {
  if (!converts()) return {samples.begin(), samples.end()};
  const double ratio = static_cast<double>(to_) / from_;
  std::vector<float> out(
      static_cast<size_t>(std::ceil(static_cast<double>(samples.size()) * ratio)) + 256);
  SRC_DATA d{};
  d.data_in = samples.data();
  d.input_frames = static_cast<long>(samples.size());
  d.data_out = out.data();
  d.output_frames = static_cast<long>(out.size());
  d.src_ratio = ratio;
  d.end_of_input = end ? 1 : 0;
  std::vector<float> result;
  for (;;) {
    const int err = src_process(state_->src, &d);
    check(err == 0, name_, ": resampling from ", from_, " Hz to ", to_, " Hz failed (",
          src_strerror(err), ")");
    result.insert(result.end(), out.begin(), out.begin() + d.output_frames_gen);
    const bool moved = d.input_frames_used > 0 || d.output_frames_gen > 0;
    d.data_in += d.input_frames_used;
    d.input_frames -= d.input_frames_used;
    if (d.input_frames > 0 && moved) continue;     // input left: the output buffer was full
    if (end && d.output_frames_gen > 0) continue;  // the end: drain what the filter holds
    break;
  }
  return result;
}

}  // namespace heed
