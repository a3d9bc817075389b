// Audio as it arrives: a byte stream (a pipe, a socket, stdin; `heed transcribe --online`) read
// in pieces into 16 kHz mono samples at full scale 1, as read_audio (io/audio.h) gives a file's.
//   raw: 16-bit signed little-endian PCM, `channels` interleaved, at `sample_rate`
//        (arecord -f S16_LE, sox -t raw, ffmpeg -f s16le)
//   wav: a RIFF/WAVE header, then its data: 16-bit PCM or 32-bit float, any rate and channels;
//        the data's size may be 0 or 0xFFFFFFFF (a stream of unknown length: read to its end)
// The channels are averaged and the rate converted as the samples come (io/resampler.h).
// A header that is not WAVE, a format other than these, or a stream that ends inside its header
// is an Error naming the stream.
// Leaves out: whole files (io/audio.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "heed/io/resampler.h"
#include "heed/util/names.h"

namespace heed {

enum class StreamFormat { Raw, Wav };
std::span<const Named<StreamFormat>> names(StreamFormat);  // "raw" | "wav"

struct AudioStreamOptions {
  StreamFormat format = StreamFormat::Wav;
  int sample_rate = 16000;  // raw: the samples' rate (a WAV header says its own)
  int channels = 1;         // raw: interleaved channels
  int to_rate = 16000;      // what the samples are converted to
};

class AudioStreamReader {
 public:
  // Reads the file descriptor `fd` (not closed here); `name` names it in errors. A WAV header
  // is read here, before the first samples.
  AudioStreamReader(int fd, std::string name, const AudioStreamOptions& options);
  ~AudioStreamReader();
  AudioStreamReader(const AudioStreamReader&) = delete;
  AudioStreamReader& operator=(const AudioStreamReader&) = delete;

  // The next stretch of about `seconds` of audio (less at the stream's end, after waiting for
  // it to fill: a live source blocks here), converted; empty once the stream has ended.
  std::vector<float> read(double seconds);
  bool ended() const { return ended_; }
  int input_rate() const { return rate_; }
  int input_channels() const { return channels_; }

 private:
  // up to n bytes, fewer only at the end of the stream
  size_t read_bytes(char* out, size_t n);
  void read_wav_header();

  int fd_;
  std::string name_;
  AudioStreamOptions o_;
  int rate_ = 16000, channels_ = 1, bytes_ = 2;  // the input's; bytes per sample
  bool float_ = false;                           // 32-bit float samples (WAV format 3)
  int64_t data_left_ = -1;                       // WAV: bytes of its data chunk left (-1: to EOF)
  bool ended_ = false;
  std::unique_ptr<StreamResampler> src_;  // when the rates differ
};

}  // namespace heed
