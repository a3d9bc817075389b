// Audio in (io/audio.h): any rate and channel count to 16 kHz mono, and every kind of bad file
// refused naming it.
#include <gtest/gtest.h>

#include <sndfile.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "heed/io/audio.h"
#include "support/errors.h"
#include "support/temp_dir.h"

namespace heed {
namespace {

// A 16-bit WAV of `channels` channels at `rate`: a 440 Hz tone in channel 0, half of it in the
// others, `seconds` long.
void write_wav(const std::string& path, int rate, int channels, double seconds) {
  SF_INFO info{};
  info.samplerate = rate;
  info.channels = channels;
  info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
  SNDFILE* f = sf_open(path.c_str(), SFM_WRITE, &info);
  ASSERT_NE(f, nullptr) << sf_strerror(nullptr);
  const auto frames = static_cast<int64_t>(seconds * rate);
  std::vector<float> x(static_cast<size_t>(frames * channels));
  for (int64_t t = 0; t < frames; ++t)
    for (int c = 0; c < channels; ++c)
      x[static_cast<size_t>(t * channels + c)] =
          (c == 0 ? 0.5f : 0.25f) * static_cast<float>(std::sin(2 * M_PI * 440.0 * t / rate));
  sf_writef_float(f, x.data(), frames);
  sf_close(f);
}

TEST(Audio, AnyRateAndChannelsBecome16kMono) {
  testing::TempDir dir;
  write_wav(dir / "a.wav", 44100, 2, 1.0);
  const Audio a = read_audio(dir / "a.wav");
  EXPECT_EQ(a.file_rate, 44100);
  EXPECT_EQ(a.file_channels, 2);
  EXPECT_EQ(a.sample_rate, 16000);
  EXPECT_NEAR(static_cast<double>(a.samples.size()), 16000, 2);
  // the channels' mean (0.375 of full scale) survives the conversion
  float peak = 0;
  for (size_t n = 1000; n < a.samples.size() - 1000; ++n)
    peak = std::max(peak, std::abs(a.samples[n]));
  EXPECT_NEAR(peak, 0.375f, 0.01f);
  write_wav(dir / "b.wav", 16000, 1, 0.5);
  EXPECT_EQ(read_audio(dir / "b.wav").samples.size(), 8000u);  // no conversion: the samples
}

TEST(Audio, BadFilesAreErrorsNamingThem) {
  testing::TempDir dir;
  std::ofstream(dir / "text.wav") << "not audio at all\n";
  EXPECT_NE(
      testing::error_of([&] { read_audio(dir / "text.wav"); }).find("text.wav: not an audio file"),
      std::string::npos);
  EXPECT_NE(testing::error_of([&] { read_audio(dir / "none.wav"); }).find("none.wav: cannot open"),
            std::string::npos);
  write_wav(dir / "long.wav", 16000, 1, 2.0);
  EXPECT_NE(testing::error_of([&] {
              read_audio(dir / "long.wav", {.max_seconds = 1.5});
            }).find("more than the limit of 1.5 s"),
            std::string::npos);
  write_wav(dir / "empty.wav", 16000, 1, 0.0);
  EXPECT_NE(testing::error_of([&] { read_audio(dir / "empty.wav"); }).find("no audio"),
            std::string::npos);
  // a header announcing more frames than the file holds
  write_wav(dir / "cut.wav", 16000, 1, 1.0);
  std::filesystem::resize_file(dir / "cut.wav", 44 + 8000);
  EXPECT_NE(testing::error_of([&] { read_audio(dir / "cut.wav"); }).find("cut.wav: truncated"),
            std::string::npos);
}

}  // namespace
}  // namespace heed
