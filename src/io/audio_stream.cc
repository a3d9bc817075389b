// Audio as it arrives (see the header).
#include "heed/io/audio_stream.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "heed/io/resampler.h"
#include "heed/util/error.h"

namespace heed {

std::span<const Named<StreamFormat>> names(StreamFormat) {
  static constexpr Named<StreamFormat> kNames[] = {{StreamFormat::Raw, "raw"},
                                                   {StreamFormat::Wav, "wav"}};
  return kNames;
}

namespace {

uint32_t le32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint16_t le16(const char* p) {
  return static_cast<uint16_t>(static_cast<unsigned char>(p[0]) |
                               (static_cast<unsigned char>(p[1]) << 8));
}

}  // namespace

AudioStreamReader::AudioStreamReader(int fd, std::string name, const AudioStreamOptions& o)
    : fd_(fd), name_(std::move(name)), o_(o) {
  check(o.to_rate > 0, name_, ": a rate of ", o.to_rate, " Hz");
  if (o.format == StreamFormat::Wav) {
    read_wav_header();
  } else {
    check(o.sample_rate >= 1000 && o.sample_rate <= 768000, name_, ": raw audio at a rate of ",
          o.sample_rate, " Hz (--sample-rate, 1000..768000)");
    check(o.channels >= 1 && o.channels <= 64, name_, ": raw audio of ", o.channels,
          " channels (--channels, 1..64)");
    rate_ = o.sample_rate;
    channels_ = o.channels;
  }
  if (rate_ != o.to_rate) src_ = std::make_unique<StreamResampler>(rate_, o.to_rate, name_);
}

AudioStreamReader::~AudioStreamReader() = default;

size_t AudioStreamReader::read_bytes(char* out, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd_, out + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    check(r >= 0, name_, ": read failed (", std::strerror(errno), ")");
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

void AudioStreamReader::read_wav_header() {
  char head[12];
  check(read_bytes(head, 12) == 12 && std::memcmp(head, "RIFF", 4) == 0 &&
            std::memcmp(head + 8, "WAVE", 4) == 0,
        name_, ": not a WAV stream (no RIFF/WAVE header; raw PCM needs --input-format raw)");
  bool format = false;
  for (;;) {
    char chunk[8];
    check(read_bytes(chunk, 8) == 8, name_, ": the stream ended before its data chunk");
    const uint32_t size = le32(chunk + 4);
    if (std::memcmp(chunk, "data", 4) == 0) {
      check(format, name_, ": a data chunk before the fmt chunk");
      data_left_ = size == 0 || size == 0xFFFFFFFFu ? -1 : static_cast<int64_t>(size);
      return;
    }
    if (std::memcmp(chunk, "fmt ", 4) == 0) {
      check(size >= 16 && size <= 4096, name_, ": a fmt chunk of ", size, " bytes");
      std::vector<char> f(size);
      check(read_bytes(f.data(), size) == size, name_, ": the stream ended inside its fmt chunk");
      uint16_t tag = le16(f.data());
      if (tag == 0xFFFE && size >= 26) tag = le16(f.data() + 24);  // WAVE_FORMAT_EXTENSIBLE
      channels_ = le16(f.data() + 2);
      rate_ = static_cast<int>(le32(f.data() + 4));
      const int bits = le16(f.data() + 14);
      check(channels_ >= 1 && channels_ <= 64 && rate_ >= 1000 && rate_ <= 768000, name_,
            ": a WAV header of ", channels_, " channels at ", rate_, " Hz");
      check((tag == 1 && bits == 16) || (tag == 3 && bits == 32), name_, ": WAV format ", tag,
            " with ", bits, "-bit samples; a stream is read as 16-bit PCM or 32-bit float");
      float_ = tag == 3;
      bytes_ = bits / 8;
      if (size % 2 == 1) {
        char pad;
        read_bytes(&pad, 1);
      }
      format = true;
      continue;
    }
    // any other chunk (LIST, fact, ...) skipped, with its pad byte
    std::vector<char> skip(size + size % 2);
    check(read_bytes(skip.data(), skip.size()) == skip.size(), name_,
          ": the stream ended inside a chunk before its data");
  }
}

std::vector<float> AudioStreamReader::read(double seconds) {
  if (ended_) return {};
  const auto frames = std::max<int64_t>(1, std::llround(seconds * rate_));
  const auto frame_bytes = static_cast<int64_t>(bytes_) * channels_;
  int64_t want = frames * frame_bytes;
  if (data_left_ >= 0) want = std::min(want, data_left_);
  std::vector<char> bytes(static_cast<size_t>(want));
  const size_t got = read_bytes(bytes.data(), bytes.size());
  if (data_left_ >= 0) data_left_ -= static_cast<int64_t>(got);
  const bool end = got < bytes.size() || data_left_ == 0;
  const auto n = static_cast<int64_t>(got) / frame_bytes;  // a cut last frame is dropped
  std::vector<float> mono(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t) {
    double sum = 0;
    for (int c = 0; c < channels_; ++c) {
      const char* p = bytes.data() + t * frame_bytes + c * bytes_;
      if (float_) {
        float v;
        std::memcpy(&v, p, 4);
        sum += v;
      } else {
        sum += static_cast<int16_t>(le16(p)) / 32768.0;
      }
    }
    mono[static_cast<size_t>(t)] = static_cast<float>(sum / channels_);
  }
  ended_ = end;
  return src_ ? src_->push(mono, end) : mono;
}

}  // namespace heed
