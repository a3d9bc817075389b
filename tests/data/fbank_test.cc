// Kaldi's filterbank against torchaudio.compliance.kaldi.fbank: the features of two 16 kHz WAV
// files (speech from espeak-ng, and a chirp in noise) as torchaudio 0.13 computed them in float64
// (tests/golden/audio/*.fbank.npy), read through heed's audio reader; and the filterbank's
// structure (frame count, filters).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "heed/data/fbank.h"
#include "heed/io/audio.h"
#include "heed/io/files.h"
#include "heed/io/npy.h"

namespace heed {
namespace {

const std::filesystem::path kAudio =
    std::filesystem::path(HEED_SOURCE_DIR) / "tests" / "golden" / "audio";

// A float32 .npy file's values and shape (the header's "shape": (a, b)).
std::vector<float> read_npy(const std::string& path, int64_t& rows, int64_t& cols) {
  const std::string bytes = read_file(path);
  const auto header_len = static_cast<size_t>(static_cast<unsigned char>(bytes[8]) |
                                              static_cast<unsigned char>(bytes[9]) << 8);
  const std::string header = bytes.substr(10, header_len);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
  const size_t open = header.find("'shape': (") + 10;
  rows = std::stoll(header.substr(open));
  cols = std::stoll(header.substr(header.find(',', open) + 1));
  std::vector<float> v(static_cast<size_t>(rows * cols));
  std::memcpy(v.data(), bytes.data() + 10 + header_len, v.size() * sizeof(float));
  return v;
}

// The features of tests/golden/audio/NAME.wav in `precision` against torchaudio's float64 ones:
// the largest and the mean absolute difference.
std::pair<double, double> distance_to_torchaudio(const char* name, FbankPrecision precision) {
  const Fbank fbank({.precision = precision});
  Audio a = read_audio((kAudio / (std::string(name) + ".wav")).string());
  EXPECT_EQ(a.file_rate, 16000);
  for (float& s : a.samples) s *= 32768.f;
  const std::vector<float> ours = fbank.compute(a.samples);
  int64_t rows = 0, cols = 0;
  const std::vector<float> ref =
      read_npy((kAudio / (std::string(name) + ".fbank.npy")).string(), rows, cols);
  EXPECT_EQ(cols, 80);
  EXPECT_EQ(rows, fbank.frames(static_cast<int64_t>(a.samples.size())));
  if (ours.size() != ref.size()) {
    ADD_FAILURE() << name << ": " << ours.size() << " values, torchaudio's " << ref.size();
    return {1e9, 1e9};
  }
  double worst = 0, sum = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = std::abs(static_cast<double>(ours[i]) - ref[i]);
    worst = std::max(worst, d);
    sum += d;
  }
  return {worst, sum / static_cast<double>(ref.size())};
}

TEST(Fbank, EqualsTorchaudiosKaldiFbankOnSpeechAndSynthesis) {
  for (const char* name : {"speech16k", "chirp16k"}) {
    SCOPED_TRACE(name);
    // float64: the 1e-3 (the gaps left are the filters' weights, kept in float)
    const auto [worst64, mean64] = distance_to_torchaudio(name, FbankPrecision::float64);
    EXPECT_LT(worst64, 1e-3);
    EXPECT_LT(mean64, 1e-5);
    // float32 spectra: a bin 60-80 dB under its frame's peak carries 1e-3 or more of rounding
    // (torchaudio's own float32 default is 1.1e-3 from its float64 result on these files)
    const auto [worst32, mean32] = distance_to_torchaudio(name, FbankPrecision::float32);
    EXPECT_LT(worst32, 3e-3);
    EXPECT_LT(mean32, 2e-5);
    EXPECT_LT(worst64, worst32);
  }
}

TEST(Fbank, FramesFiltersAndSilence) {
  const Fbank fbank;
  EXPECT_EQ(fbank.frame_length(), 400);
  EXPECT_EQ(fbank.frame_shift(), 160);
  EXPECT_EQ(fbank.frames(399), 0);
  EXPECT_EQ(fbank.frames(400), 1);
  EXPECT_EQ(fbank.frames(559), 1);
  EXPECT_EQ(fbank.frames(560), 2);
  // silence: every filter at ln(FLT_EPSILON)
  const std::vector<float> zeros(1600, 0.f);
  const std::vector<float> f = fbank.compute(zeros);
  ASSERT_EQ(f.size(), 8u * 80u);  // 1 + (1600 - 400) / 160 frames
  for (float v : f) EXPECT_FLOAT_EQ(v, std::log(1.1920929e-07f));
  // a pure tone lights the filter whose centre is nearest its frequency
  std::vector<float> tone(16000);
  for (size_t n = 0; n < tone.size(); ++n)
    tone[n] =
        10000.f * static_cast<float>(std::sin(2 * M_PI * 1000.0 * static_cast<double>(n) / 16000));
  const std::vector<float> t = fbank.compute(tone);
  const double mel_low = mel_scale(20), delta = (mel_scale(8000) - mel_low) / 81;
  const auto want = static_cast<int64_t>(std::lround((mel_scale(1000) - mel_low) / delta - 1));
  const float* row = t.data() + 10 * 80;
  EXPECT_EQ(std::max_element(row, row + 80) - row, want);
}

TEST(Npy, HeaderIsNumpys) {
  const std::vector<float> v = {1, 2, 3, 4, 5, 6};
  const std::string b = npy_bytes(v, {2, 3});
  EXPECT_EQ(b.substr(0, 6), "\x93NUMPY");
  const size_t len = static_cast<unsigned char>(b[8]) | static_cast<unsigned char>(b[9]) << 8;
  EXPECT_EQ((10 + len) % 64, 0u);  // the data aligned to 64 bytes
  EXPECT_NE(b.find("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"),
            std::string::npos);
  EXPECT_EQ(b.back(), static_cast<char>(0x40));  // 6.0f = 0x40c00000, little-endian
  EXPECT_NE(npy_bytes(std::vector<float>{1}, {1}).find("'shape': (1,)"), std::string::npos);
}

}  // namespace
}  // namespace heed
