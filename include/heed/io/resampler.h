// A rate converter for audio that arrives in pieces: libsamplerate's streaming sinc converter
// (medium quality by default), its filter state carried from piece to piece, so that the pieces
// converted one after another are the whole converted at once (up to float rounding). The
// stream readers' (io/audio_stream.h) and the server's streaming route's (serve/) conversion to
// 16 kHz; whole files' (io/audio.h's resample) as one last piece.
// Leaves out: reading audio (io/audio.h, io/audio_stream.h).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace heed {

// libsamplerate's sinc converters: best (SRC_SINC_BEST_QUALITY, what read_audio uses), medium
// (SRC_SINC_MEDIUM_QUALITY: about 4x faster, for synthesised speech and streams) or fastest
// (SRC_SINC_FASTEST: speed perturbation at every training step).
enum class ResampleQuality { best, medium, fastest };

class StreamResampler {
 public:
  // `name` names the stream in errors; rates in 1000..768000 Hz (an Error otherwise).
  StreamResampler(int from_rate, int to_rate, std::string name,
                  ResampleQuality quality = ResampleQuality::medium);
  ~StreamResampler();
  StreamResampler(const StreamResampler&) = delete;
  StreamResampler& operator=(const StreamResampler&) = delete;

  // The next mono samples at from_rate -> those at to_rate they complete (the filter holds a
  // few back); `end`: the stream's last piece, and what the filter holds is given out too.
  std::vector<float> push(std::span<const float> samples, bool end);
  bool converts() const { return from_ != to_; }  // false: push() passes samples through

 private:
  int from_, to_;
  std::string name_;
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace heed
