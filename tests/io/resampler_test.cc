// The streaming rate converter (io/resampler.h): pieces of any size, one after another, give
// what the whole signal converted at once gives; a tone keeps its pitch and its length; equal
// rates pass the samples through; a rate out of range is an Error naming the stream.
#include "heed/io/resampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "heed/util/error.h"

namespace heed {
namespace {

std::vector<float> tone(int rate, double hz, double seconds) {
  std::vector<float> x(static_cast<size_t>(rate * seconds));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 0.5f * static_cast<float>(std::sin(2 * M_PI * hz * static_cast<double>(i) / rate));
  return x;
}

TEST(StreamResampler, PiecesGiveTheWhole) {
  const std::vector<float> x = tone(48000, 440, 1.0);
  StreamResampler whole(48000, 16000, "whole");
  const std::vector<float> all = whole.push(x, /*end=*/true);
  EXPECT_NEAR(static_cast<double>(all.size()), 16000, 2);
  for (size_t piece : {1, 37, 480, 4800}) {
    StreamResampler r(48000, 16000, "pieces");
    std::vector<float> got;
    for (size_t i = 0; i < x.size(); i += piece) {
      const size_t n = std::min(piece, x.size() - i);
      const std::vector<float> y =
          r.push(std::span<const float>(x).subspan(i, n), /*end=*/i + n == x.size());
      got.insert(got.end(), y.begin(), y.end());
    }
    ASSERT_EQ(got.size(), all.size()) << "pieces of " << piece;
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], all[i], 1e-5) << i;
  }
  // the tone at 16 kHz: its samples away from the edges are the 440 Hz sine's
  const std::vector<float> want = tone(16000, 440, 1.0);
  double err = 0;
  for (size_t i = 200; i + 200 < want.size(); ++i)
    err = std::max(err, static_cast<double>(std::abs(all[i] - want[i])));
  EXPECT_LT(err, 1e-2);
}

TEST(StreamResampler, EqualRatesPassThroughAndBadRatesAreErrors) {
  StreamResampler same(16000, 16000, "same");
  EXPECT_FALSE(same.converts());
  const std::vector<float> x = {0.1f, -0.2f, 0.3f};
  EXPECT_EQ(same.push(x, false), x);
  try {
    StreamResampler bad(5, 16000, "the stream");
    FAIL() << "a rate of 5 Hz accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the stream: a rate of 5 Hz"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace heed
