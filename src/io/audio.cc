// Audio files through libsndfile, resampled by libsamplerate (see the header).
#include "heed/io/audio.h"

#include <sndfile.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

#include "heed/io/files.h"
#include "heed/io/resampler.h"
#include "heed/util/error.h"

namespace heed {

std::vector<float> resample(std::vector<float> samples, int rate, int to_rate,
                            const std::string& what, ResampleQuality quality) {
  if (rate == to_rate || samples.empty()) return samples;
  return StreamResampler(rate, to_rate, what, quality).push(samples, /*end=*/true);
}

namespace {

using SndFile = std::unique_ptr<SNDFILE, int (*)(SNDFILE*)>;

// An open libsndfile stream to 16 kHz mono samples; `path` names it in errors.
Audio decode(SNDFILE* f, const SF_INFO& info, const std::string& path, const AudioOptions& o) {
  check(info.samplerate > 0 && info.channels > 0, path,
        ": an audio header without a rate or channels");
  // a WAV cut short: libsndfile reads what is there and notes the header's claim in its log
  // ("data : 32000 (should be 8000)"); heed refuses it rather than train on part of a file
  char log[2048] = {};
  sf_command(f, SFC_GET_LOG_INFO, log, sizeof log);
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
  const sf_count_t got = sf_readf_float(f, interleaved.data(), info.frames);
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

// libsndfile's virtual I/O over bytes in memory
struct Memory {
  std::string_view bytes;
  sf_count_t at = 0;
};
sf_count_t memory_length(void* m) {
  return static_cast<sf_count_t>(static_cast<Memory*>(m)->bytes.size());
}
sf_count_t memory_seek(sf_count_t offset, int whence, void* p) {
  auto* m = static_cast<Memory*>(p);
  const sf_count_t n = static_cast<sf_count_t>(m->bytes.size());
  sf_count_t to = whence == SEEK_SET ? offset : whence == SEEK_CUR ? m->at + offset : n + offset;
  m->at = std::clamp<sf_count_t>(to, 0, n);
  return m->at;
}
sf_count_t memory_read(void* out, sf_count_t count, void* p) {
  auto* m = static_cast<Memory*>(p);
  const sf_count_t n =
      std::min<sf_count_t>(count, static_cast<sf_count_t>(m->bytes.size()) - m->at);
  std::memcpy(out, m->bytes.data() + m->at, static_cast<size_t>(std::max<sf_count_t>(n, 0)));
  m->at += std::max<sf_count_t>(n, 0);
  return std::max<sf_count_t>(n, 0);
}
sf_count_t memory_write(const void*, sf_count_t, void*) {
  return 0;
}
sf_count_t memory_tell(void* m) {
  return static_cast<Memory*>(m)->at;
}

}  // namespace

Audio read_audio(const std::string& path, const AudioOptions& o) {
  SF_INFO info{};
  SndFile f(sf_open(path.c_str(), SFM_READ, &info), sf_close);
  if (!f) {
    const std::string why = sf_strerror(nullptr);
    // a file that cannot be opened at all says so as such (a missing one as FileError)
    FILE* probe = std::fopen(path.c_str(), "rb");
    if (probe == nullptr)
      throw FileError(path, errno, std::string("cannot open (") + std::strerror(errno) + ")");
    std::fclose(probe);
    fail(path, ": not an audio file heed reads (libsndfile: ", why, ")");
  }
  return decode(f.get(), info, path, o);
}

Audio read_audio_bytes(std::string_view bytes, const std::string& name, const AudioOptions& o) {
  SF_INFO info{};
  Memory m{bytes};
  SF_VIRTUAL_IO io{memory_length, memory_seek, memory_read, memory_write, memory_tell};
  SndFile f(sf_open_virtual(&io, SFM_READ, &info, &m), sf_close);
  if (!f) fail(name, ": not audio heed reads (libsndfile: ", sf_strerror(nullptr), ")");
  return decode(f.get(), info, name, o);
}

std::string wav_bytes(std::span<const float> x, int rate) {
  check(rate > 0 && x.size() < (1ULL << 31) - 64, "wav: ", x.size(), " samples at ", rate, " Hz");
  auto u32 = [](std::string& s, uint32_t v) {
    for (int k = 0; k < 4; ++k) s += static_cast<char>((v >> (8 * k)) & 0xff);
  };
  auto u16 = [](std::string& s, uint16_t v) {
    s += static_cast<char>(v & 0xff);
    s += static_cast<char>(v >> 8);
  };
  std::string s = "RIFF";
  const auto data = static_cast<uint32_t>(2 * x.size());
  u32(s, 36 + data);
  s += "WAVEfmt ";
  u32(s, 16);
  u16(s, 1);  // PCM
  u16(s, 1);  // mono
  u32(s, static_cast<uint32_t>(rate));
  u32(s, static_cast<uint32_t>(2 * rate));  // bytes per second
  u16(s, 2);                                // bytes per frame
  u16(s, 16);                               // bits per sample
  s += "data";
  u32(s, data);
  s.reserve(s.size() + data);
  for (float v : x) {
    const float c = std::clamp(v, -1.f, 32767.f / 32768.f);
    u16(s, static_cast<uint16_t>(static_cast<int16_t>(std::lround(c * 32768.f))));
  }
  return s;
}

void write_wav(const std::string& path, std::span<const float> samples, int rate) {
  write_file_atomic(path, wav_bytes(samples, rate));
}

}  // namespace heed
