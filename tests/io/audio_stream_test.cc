// Audio read as it arrives (io/audio_stream.h) through a pipe: a WAV stream gives the samples
// read_audio gives its file (16-bit PCM and 32-bit float, several channels, other chunks
// before the data, a data size of 0 for a stream of unknown length), in pieces of any size;
// raw PCM at 8 kHz comes out at 16 kHz as the whole-file resampler makes it; a stream that is
// not WAV, or WAV in another format, is an Error naming the stream.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <string>
#include <thread>

#include "heed/io/audio.h"
#include "heed/io/audio_stream.h"
#include "heed/util/error.h"

namespace heed {
namespace {

// Reads `bytes` through a pipe written by another thread, `seconds` at a time.
std::vector<float> through_pipe(const std::string& bytes, const AudioStreamOptions& o,
                                double seconds) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  std::thread writer([&] {
    size_t done = 0;
    while (done < bytes.size()) {  // in uneven pieces, as a live source writes
      const size_t n = std::min<size_t>(bytes.size() - done, 1 + (done * 7919) % 3001);
      const ssize_t w = ::write(fds[1], bytes.data() + done, n);
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
    ::close(fds[1]);
  });
  std::vector<float> out;
  try {
    AudioStreamReader in(fds[0], "<pipe>", o);
    while (!in.ended()) {
      const std::vector<float> x = in.read(seconds);
      out.insert(out.end(), x.begin(), x.end());
    }
  } catch (...) {
    writer.join();
    ::close(fds[0]);
    throw;
  }
  writer.join();
  ::close(fds[0]);
  return out;
}

std::vector<float> tone(int rate, double seconds) {
  std::vector<float> x(static_cast<size_t>(rate * seconds));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 0.4f * static_cast<float>(std::sin(2 * M_PI * 440.0 * static_cast<double>(i) / rate));
  return x;
}

void put16(std::string& s, int v) {
  s += static_cast<char>(v & 0xff);
  s += static_cast<char>((v >> 8) & 0xff);
}
void put32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

// A WAV of `frames` x `channels` 32-bit floats with a LIST chunk before the data, whose size
// is written as 0 (a stream's unknown length).
std::string float_wav(const std::vector<float>& mono, int rate, int channels) {
  std::string s = "RIFF";
  put32(s, 0);
  s += "WAVEfmt ";
  put32(s, 16);
  put16(s, 3);  // IEEE float
  put16(s, channels);
  put32(s, static_cast<uint32_t>(rate));
  put32(s, static_cast<uint32_t>(rate * channels * 4));
  put16(s, channels * 4);
  put16(s, 32);
  s += "LIST";
  put32(s, 5);
  s += "heed!";  // an odd size: a pad byte follows
  s += '\0';
  s += "data";
  put32(s, 0);
  for (float v : mono)
    for (int c = 0; c < channels; ++c) {
      const float x = c == 0 ? v : -v / 2;  // the channels differ: their mean is v / 4
      char b[4];
      std::memcpy(b, &x, 4);
      s.append(b, 4);
    }
  return s;
}

TEST(AudioStream, WavThroughAPipeIsWhatTheFileReaderReads) {
  const std::vector<float> x = tone(16000, 1.3);
  const std::string wav = wav_bytes(x, 16000);
  const Audio file = read_audio_bytes(wav, "tone.wav");
  for (double piece : {0.01, 0.16, 5.0}) {
    const std::vector<float> got = through_pipe(wav, {}, piece);
    ASSERT_EQ(got.size(), file.samples.size()) << piece;
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], file.samples[i]) << i;
  }
  // 32-bit float, two channels averaged, a chunk skipped, the data's size unknown
  const std::vector<float> two = through_pipe(float_wav(x, 16000, 2), {}, 0.1);
  ASSERT_EQ(two.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(two[i], x[i] / 4, 1e-7f) << i;
}

TEST(AudioStream, RawPcmAt8kHzComesOutAt16kHz) {
  const std::vector<float> x = tone(8000, 2.0);
  std::string raw;
  for (float v : x) put16(raw, static_cast<int>(std::lround(v * 32767)));
  const std::vector<float> got =
      through_pipe(raw, {.format = StreamFormat::Raw, .sample_rate = 8000}, 0.16);
  // the whole-signal converter's length, and the same tone (its filters differ: medium quality)
  const std::vector<float> whole = resample(x, 8000, 16000, "x");
  EXPECT_NEAR(static_cast<double>(got.size()), static_cast<double>(whole.size()), 2.0);
  double err = 0;
  for (size_t i = 1000; i + 1000 < std::min(got.size(), whole.size()); ++i)
    err = std::max(err, static_cast<double>(std::abs(got[i] - whole[i])));
  EXPECT_LT(err, 2e-3);
}

TEST(AudioStream, WhatIsNotAWavStreamIsAnErrorNamingIt) {
  for (const std::string& bytes :
       {std::string("not audio at all, not even close"), std::string("RIFF\0\0\0\0WAVEfmt ", 16)}) {
    try {
      through_pipe(bytes, {}, 0.1);
      ADD_FAILURE() << "read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("<pipe>"), std::string::npos) << e.what();
    }
  }
  std::string wav24 = float_wav(tone(16000, 0.1), 16000, 1);
  wav24[20] = 1;   // PCM
  wav24[34] = 24;  // 24-bit
  try {
    through_pipe(wav24, {}, 0.1);
    ADD_FAILURE() << "24-bit read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("16-bit PCM or 32-bit float"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace heed
