// The n-gram model (models/ngram_lm.h) and its modified Kneser–Ney estimate
// (train/kneser_ney.h): every context's distribution sums to 1 over the vocabulary, a bigram
// model of a tiny text matches the formula computed by hand, ARPA files round-trip, and a
// malformed ARPA file is an error naming its file and line.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "heed/kernels/random.h"
#include "heed/models/ngram_lm.h"
#include "heed/train/kneser_ney.h"
#include "heed/util/error.h"
#include "support/errors.h"
#include "support/temp_dir.h"

namespace heed {
namespace {

std::vector<std::vector<std::string>> random_text(Rng& rng, int n, int words) {
  std::vector<std::vector<std::string>> text;
  for (int i = 0; i < n; ++i) {
    std::vector<std::string> s;
    const int64_t len = 1 + rng.below(7);
    // a skewed choice, so that counts of counts 1..4 all occur
    for (int64_t k = 0; k < len; ++k)
      s.push_back(std::string("w").append(std::to_string(rng.below(1 + rng.below(words)))));
    text.push_back(std::move(s));
  }
  return text;
}

// sum over the vocabulary (every word but <s>) of p(w | context)
double total(const NgramLm& lm, const std::vector<int32_t>& context) {
  double sum = 0;
  for (int32_t w = 0; w < static_cast<int32_t>(lm.words().size()); ++w)
    if (w != NgramLm::kBos) sum += std::pow(10.0, lm.log10_prob(context, w));
  return sum;
}

TEST(KneserNey, EveryContextsProbabilitiesSumToOne) {
  Rng rng(7);
  for (int order : {1, 2, 3, 5}) {
    const NgramLm lm = estimate_kneser_ney(random_text(rng, 400, 12), order);
    // the empty context, every context seen in training, and random ones (mostly unseen)
    EXPECT_NEAR(total(lm, {}), 1.0, 1e-4) << "order " << order;
    std::vector<std::vector<int32_t>> contexts = {{NgramLm::kBos}};
    for (int t = 0; t < 60; ++t) {
      std::vector<int32_t> h;
      if (t % 2 == 0) h.push_back(NgramLm::kBos);
      const int64_t len = rng.below(order);
      for (int64_t k = 0; k < len; ++k)
        h.push_back(
            static_cast<int32_t>(3 + rng.below(static_cast<int64_t>(lm.words().size()) - 3)));
      contexts.push_back(h);
    }
    for (const auto& h : contexts) EXPECT_NEAR(total(lm, h), 1.0, 1e-4) << "order " << order;
  }
}

// "a b" and "a a": a bigram model (too little text for counts of counts, so D = 0.5, 1, 1.5).
// Unigram adjusted counts are continuation counts: a follows <s> (twice, one type) and a:
// N1+(. a) = 2 {<s>, a}; b: {a} -> 1; </s>: {b, a} -> 2. Sum 5; N1 = 1 (b), N2 = 2.
// gamma() = (0.5 * 1 + 1.0 * 2) / 5 = 0.5; vocabulary {<unk>, </s>, a, b}: 4.
//   p(a) = (2 - 1) / 5 + 0.5 / 4 = 0.325, p(b) = 0.5 / 5 + 0.125 = 0.225,
//   p(</s>) = 0.325, p(<unk>) = 0.125.
// Bigrams (raw counts): <s> a: 2; a b: 1, a a: 1; b </s>: 1, a </s>: 1.
//   p(b | a) = (1 - 0.5) / 3 + gamma(a) p(b), gamma(a) = (0.5 * 3) / 3 = 0.5: 1/6 + 0.1125.
//   p(a | <s>) = (2 - 1) / 2 + gamma(<s>) p(a), gamma(<s>) = 1.0 / 2: 0.5 + 0.1625.
//   unseen p(</s> | <s>) = gamma(<s>) p(</s>) = 0.1625.
TEST(KneserNey, TinyBigramModelMatchesTheFormulaByHand) {
  const NgramLm lm = estimate_kneser_ney({{"a", "b"}, {"a", "a"}}, 2);
  const int32_t a = lm.id("a"), b = lm.id("b");
  auto p = [&](std::vector<int32_t> h, int32_t w) { return std::pow(10.0, lm.log10_prob(h, w)); };
  EXPECT_NEAR(p({}, a), 0.325, 1e-6);
  EXPECT_NEAR(p({}, b), 0.225, 1e-6);
  EXPECT_NEAR(p({}, NgramLm::kEos), 0.325, 1e-6);
  EXPECT_NEAR(p({}, NgramLm::kUnk), 0.125, 1e-6);
  EXPECT_NEAR(p({a}, b), 1.0 / 6 + 0.1125, 1e-6);
  EXPECT_NEAR(p({NgramLm::kBos}, a), 0.6625, 1e-6);
  EXPECT_NEAR(p({NgramLm::kBos}, NgramLm::kEos), 0.1625, 1e-6);
  EXPECT_NEAR(p({NgramLm::kBos}, lm.id("never seen")), 0.5 * 0.125, 1e-6);
}

TEST(NgramLm, ArpaFilesRoundTrip) {
  Rng rng(2);
  const NgramLm lm = estimate_kneser_ney(random_text(rng, 200, 9), 3);
  testing::TempDir dir;
  const std::string path = dir / "lm.arpa";
  lm.write_arpa(path);
  const NgramLm back = NgramLm::read_arpa(path);
  EXPECT_EQ(back.order(), 3);
  EXPECT_EQ(back.arpa(), lm.arpa());
  for (int n = 1; n <= 3; ++n) EXPECT_EQ(back.count(n), lm.count(n));
}

TEST(NgramLm, MalformedArpaLinesAreErrorsNamingFileAndLine) {
  testing::TempDir dir;
  const std::string good =
      "\\data\\\nngram 1=4\nngram 2=1\n\n\\1-grams:\n-1\t<unk>\n-99\t<s>\t-0.5\n-0.5\t</s>\n"
      "-0.7\ta\t-0.2\n\n\\2-grams:\n-0.1\t<s> a\n\n\\end\\\n";
  auto write = [&](const std::string& text) {
    const std::string path = dir / "x.arpa";
    std::ofstream(path) << text;
    return path;
  };
  const NgramLm ok = NgramLm::read_arpa(write(good));
  EXPECT_NEAR(ok.log10_prob(std::vector<int32_t>{NgramLm::kBos}, ok.id("a")), -0.1, 1e-6);
  EXPECT_NEAR(ok.log10_prob(std::vector<int32_t>{ok.id("a")}, ok.id("a")), -0.2 - 0.7,
              1e-6);  // backed off
  struct Case {
    std::string from, to, message;
  };
  const Case cases[] = {
      {"-0.7\ta\t-0.2", "-0.7\ta b c d", "x.arpa:9: malformed 1-gram line"},
      {"-0.7\ta", "x0.7\ta", "x.arpa:9: 'x0.7' is not a number"},
      {"-0.1\t<s> a", "-0.1\t<s> zz", "x.arpa:12: 'zz' is not among the unigrams"},
      {"ngram 2=1", "ngram 2=7", "the header counts 7 2-grams, the section lists 1"},
      {"ngram 2=1", "ngram 3=1", "x.arpa:3: malformed count line"},
      {"\\end\\", "", "expected \\end\\"},
      {"\\data\\", "data", "not an ARPA file"},
  };
  for (const Case& c : cases) {
    std::string text = good;
    text.replace(text.find(c.from), c.from.size(), c.to);
    EXPECT_NE(testing::error_of([&] { NgramLm::read_arpa(write(text)); }).find(c.message),
              std::string::npos)
        << c.message;
  }
}

}  // namespace
}  // namespace heed
