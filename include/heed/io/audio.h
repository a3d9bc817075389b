// Audio in: any file libsndfile reads (WAV, FLAC, OGG/Vorbis, ...), at any rate and with any
// number of channels, as 16 kHz mono samples — the channels averaged, the rate converted by
// libsamplerate's best sinc converter. Samples are floats in [-1, 1) (full scale 1).
// A file that is not audio, holds no samples, is shorter than its header says, or is longer
// than the limit is an Error naming it.
// Leaves out: features (data/fbank.h) and data directories (wav.scp, manifests).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "heed/io/resampler.h"

namespace heed {

struct AudioOptions {
  int sample_rate = 16000;    // what the samples are converted to
  double max_seconds = 3600;  // a longer file is refused (--max-audio-seconds)
};

struct Audio {
  std::vector<float> samples;  // mono, at sample_rate
  int sample_rate = 16000;
  // what the file held
  int file_rate = 0, file_channels = 0;
  int64_t file_frames = 0;
  double seconds() const { return static_cast<double>(samples.size()) / sample_rate; }
};

Audio read_audio(const std::string& path, const AudioOptions& options = {});
// The same from a file's bytes in memory (an HTTP request's body); `name` names it in errors.
Audio read_audio_bytes(std::string_view bytes, const std::string& name,
                       const AudioOptions& options = {});

// Mono samples from `rate` to `to_rate` (at the same rate, the samples themselves), converted
// whole (io/resampler.h's converter given them as one last piece); `what` names the source in
// errors.
std::vector<float> resample(std::vector<float> samples, int rate, int to_rate,
                            const std::string& what,
                            ResampleQuality quality = ResampleQuality::best);

// A 16-bit PCM mono WAV file of samples in [-1, 1) (clipped beyond), written atomically
// (io/files.h); its bytes alone by wav_bytes.
std::string wav_bytes(std::span<const float> samples, int rate);
void write_wav(const std::string& path, std::span<const float> samples, int rate);

}  // namespace heed
