// Audio files through libsndfile, resampled by libsamplerate (see the header).
#include "heed/io/audio.h"

#include <samplerate.h>
#include <sndfile.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

#include "heed/util/error.h"

namespace heed {

std::vector<float> resample(std::vector<float> samples, int rate, int to_rate,
                            const std::string& what) {
  if (rate == to_rate || samples.empty()) return samples;
  const double ratio = static_cast<double>(to_rate) / rate;
  std::vector<float> out(
      static_cast<size_t>(std::ceil(static_cast<double>(samples.size()) * ratio)) + 16);
  SRC_DATA d{};
  d.data_in = samples.data();
  d.input_frames = static_cast<long>(samples.size());
  d.data_out = out.data();
  d.output_frames = static_cast<long>(out.size());
  d.src_ratio = ratio;
  const int err = src_simple(&d, SRC_SINC_BEST_QUALITY, 1);
  check(err == 0, what, ": resampling from ", rate, " Hz to ", to_rate, " Hz failed (",
        src_strerror(err), ")");
  out.resize(static_cast<size_t>(d.output_frames_gen));
  return out;
}

Audio read_audio(const std::string& path, const AudioOptions& o) {
  SF_INFO info{};
  std::unique_ptr<SNDFILE, int (*)(SNDFILE*)> f(sf_open(path.c_str(), SFM_READ, &info), sf_close);
  if (!f) {
    const std::string why = sf_strerror(nullptr);
    // a file that cannot be opened at all says so as such (a missing one as FileError)
    FILE* probe = std::fopen(path.c_str(), "rb");
    if (probe == nullptr)
      throw FileError(path, errno, std::string("cannot open (") + std::strerror(errno) + ")");
    std::fclose(probe);
    fail(path, ": not an audio file heed reads (libsndfile: ", why, ")");
  }
  check(info.samplerate > 0 && info.channels > 0, path,
        ": an audio header without a rate or channels");
  // a WAV cut short: libsndfile reads what is there and notes the header's claim in its log
  // ("data : 32000 (should be 8000)"); heed refuses it rather than train on part of a file
  char log[2048] = {};
  sf_command(f.get(), SFC_GET_LOG_INFO, log, sizeof log);
  const std::string_view notes(log);
  if (const size_t data = notes.find("\ndata : "); data != std::string_view::npos) {
    const std::string_view line = notes.substr(data + 1, notes.find('\n', data + 1) - data - 1);
    check(line.find("should be") == std::string_view::npos, path,
          ": truncated: its header announces more audio than the file holds (", line, ")");
  }
  check(info.frames > 0, path, ": no audio in the file (0 samples)");
  const double seconds = static_cast<double>(info.frames) / info.samplerate;
  check(seconds <= o.max_seconds, path, ": ", seconds, " s of audio, more than the limit of ",
        o.max_seconds, " s (--max-audio-seconds)");
  std::vector<float> interleaved(static_cast<size_t>(info.frames) *
                                 static_cast<size_t>(info.channels));
  const sf_count_t got = sf_readf_float(f.get(), interleaved.data(), info.frames);
  check(got == info.frames, path, ": truncated: ", got, " of the ", info.frames,
        " frames its header announces");
  Audio a;
  a.file_rate = info.samplerate;
  a.file_channels = info.channels;
  a.file_frames = info.frames;
  // the channels' mean, in place (frame t's mean goes to t, after the frames it was read from)
  const auto C = static_cast<size_t>(info.channels), T = static_cast<size_t>(info.frames);
  if (C > 1) {
    for (size_t t = 0; t < T; ++t) {
      float s = 0;
      for (size_t c = 0; c < C; ++c) s += interleaved[t * C + c];
      interleaved[t] = s / static_cast<float>(C);
    }
    interleaved.resize(T);
  }
  a.sample_rate = o.sample_rate;
  a.samples = resample(std::move(interleaved), info.samplerate, o.sample_rate, path);
  return a;
}

}  // namespace heed
