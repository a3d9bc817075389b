// Metrics against hand-computed values, sacreBLEU's published chrF examples, and (when Debian's
// python3-nltk is installed, as scripts/install-deps.sh does) NLTK's corpus_bleu on real text.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "heed/data/text.h"
#include "heed/kernels/random.h"
#include "heed/metrics/metrics.h"
#include "heed/metrics/tokenize.h"
#include "heed/util/error.h"

namespace fs = std::filesystem;

namespace heed {
namespace {

TEST(Bleu, PerfectAndHandComputed) {
  std::vector<std::string> ref = {"the cat sat on the mat", "a dog runs in the park today"};
  EXPECT_NEAR(corpus_bleu(ref, {ref}).score, 100.0, 1e-9);
  // hyp "the cat sat on a mat" (6 tokens) vs "the cat sat on the mat":
  // 1-grams 5/6, 2-grams 3/5, 3-grams 2/4, 4-grams 1/3; BP = 1
  BleuScore s = corpus_bleu({"the cat sat on a mat"}, {{"the cat sat on the mat"}});
  double expect =
      100.0 *
      std::exp((std::log(5.0 / 6) + std::log(3.0 / 5) + std::log(2.0 / 4) + std::log(1.0 / 3)) / 4);
  EXPECT_NEAR(s.score, expect, 1e-9);
  EXPECT_NEAR(s.precisions[1], 60.0, 1e-9);
  // short hypothesis: BP = exp(1 - 6/3)
  BleuScore b = corpus_bleu({"the cat sat"}, {{"the cat sat on the mat"}});
  EXPECT_NEAR(b.bp, std::exp(1.0 - 2.0), 1e-12);
  EXPECT_EQ(b.str().rfind("BLEU = ", 0), 0u);
  // two references: the closest length counts, clipping takes the max count over references
  BleuScore two = corpus_bleu({"the the the"}, {{"the cat"}, {"the the dog"}});
  EXPECT_EQ(two.ref_len, 3);
  EXPECT_NEAR(two.precisions[0], 200.0 / 3, 1e-9);
}

TEST(Bleu, Tokenizer13aAndSignature) {
  EXPECT_EQ(tokenize_13a("Hello, world! It costs $3.50 (cheap)."),
            "Hello , world ! It costs $ 3.50 ( cheap ) .");
  EXPECT_EQ(tokenize_13a("a 1-2 match &amp; more"), "a 1 - 2 match & more");
  BleuScore s = corpus_bleu({"Hello, world!"}, {{"Hello, world!"}}, {.sacrebleu = true});
  EXPECT_NEAR(s.score, 100.0, 1e-9);
  EXPECT_NE(s.signature.find("tok:13a"), std::string::npos);
  // "exp" smoothing keeps a score when a high order has no match; plain BLEU is 0 there.
  EXPECT_GT(corpus_bleu({"a b c x"}, {{"a b c y"}}, {.sacrebleu = true}).score, 0.0);
  EXPECT_EQ(corpus_bleu({"a b x c"}, {{"a b y c"}}).score, 0.0);
}

TEST(Bleu, SacrebleuTokenisersOnUnicode) {
  // Expected strings: sacreBLEU 2's regular expressions run by Python's `regex` module.
  EXPECT_EQ(tokenize_intl("Der \u201eHund\u201c kostet 3,50 \u20ac \u2013 oder 1.000,5 \u00a3?"),
            "Der \u201e Hund \u201c kostet 3,50 \u20ac \u2013 oder 1.000,5 \u00a3 ?");
  EXPECT_EQ(tokenize_intl("Ein Mann (rechts) sagt: \u00abNon!\u00bb\u2026"),
            "Ein Mann ( rechts ) sagt : \u00ab Non ! \u00bb \u2026");
  EXPECT_EQ(tokenize_intl("It's 1999. A\u00a0b\u3000c"), "It ' s 1999 . A b c");
  EXPECT_EQ(tokenize_intl("x+y=z \u00bfqu\u00e9? \u00a1s\u00ed!"),
            "x + y = z \u00bf qu\u00e9 ? \u00a1 s\u00ed !");
  // 13a keeps Unicode punctuation attached: it knows only ASCII's
  EXPECT_EQ(tokenize_13a("\u201eHund\u201c, 3.50 \u20ac."), "\u201eHund\u201c , 3.50 \u20ac .");
  // Python's str.lower(): full case mapping, final sigma
  EXPECT_EQ(unicode_lower("\u0130STANBUL \u03a3\u039f\u03a6\u039f\u03a3 Stra\u00dfe"),
            "i\u0307stanbul \u03c3\u03bf\u03c6\u03bf\u03c2 stra\u00dfe");
  // Python's str.split(): Unicode whitespace, not only ASCII's
  EXPECT_EQ(unicode_split("a\u00a0b\u2009c\x1f"
                          "d e\u3000"),
            (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(unicode_rstrip("a b \u00a0\t"), "a b");
  EXPECT_EQ(bleu_tokens("Ab c\u00e9 ", BleuTokenize::Char, true),
            (std::vector<std::string>{"a", "b", "c", "\u00e9"}));
}

// sacreBLEU 2.6.0's own scores (../shared/oracles/sacrebleu/scores.jsonl: BLEU with each
// tokeniser and lowercased, chrF and chrF++, on Multi30k's raw test2016 against damaged copies):
// the score to its fourth decimal, the verbose line and the signature but its version.
TEST(Bleu, EqualsSacrebleuOnItsOwnOutputs) {
  const fs::path oracle = fs::path(HEED_SOURCE_DIR) / ".." / "shared" / "oracles" / "sacrebleu";
  const fs::path data = fs::path(HEED_SOURCE_DIR) / ".." / "shared" / "data";
  if (!fs::exists(oracle / "scores.jsonl") || !fs::exists(data / "multi30k"))
    GTEST_SKIP() << "no ../shared/oracles/sacrebleu or ../shared/data";
  auto without_version = [](const std::string& sig) { return sig.substr(0, sig.rfind('|')); };
  auto four = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", v);
    return std::string(buf);
  };
  int checked = 0;
  for (const std::string& line : read_lines((oracle / "scores.jsonl").string())) {
    const nlohmann::json o = nlohmann::json::parse(line);
    SCOPED_TRACE(line);
    const std::vector<std::string> hyps =
        read_lines((oracle / o["hyp"].get<std::string>()).string());
    const std::vector<std::vector<std::string>> refs = {
        read_lines((data / o["ref"].get<std::string>()).string())};
    const std::string opt = o["options"];
    const std::string want_sig = without_version(o["signature"]);
    if (o["metric"] == "bleu") {
      BleuOptions b{.sacrebleu = true, .lowercase = opt == "--lowercase"};
      for (BleuTokenize t : {BleuTokenize::Intl, BleuTokenize::Char, BleuTokenize::None})
        if (opt == std::string("--tokenize ") + name_of(t)) b.tokenize = t;
      const BleuScore s = corpus_bleu(hyps, refs, b);
      EXPECT_EQ(four(s.score), four(o["score"].get<double>()));
      EXPECT_EQ(s.verbose(), o["verbose_score"].get<std::string>());
      EXPECT_EQ(without_version(s.signature), want_sig);
    } else {
      ChrfOptions c;
      if (opt == "--chrf-word-order 2") c.word_order = 2;
      const ChrfScore s = corpus_chrf(hyps, refs, c);
      EXPECT_EQ(four(s.score), four(o["score"].get<double>()));
      EXPECT_EQ(without_version(s.signature), want_sig);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 28);
}

TEST(Bleu, EffectiveOrderAsSacrebleuSentenceBleu) {
  // "a b c" against "a b c d": orders 1..3 all matched, no 4-grams; the effective order
  // averages the three, BP = exp(1 - 4/3). Without it, BLEU is 0.
  const BleuOptions sentence{
      .sacrebleu = true, .tokenize = BleuTokenize::None, .effective_order = true};
  const BleuScore s = corpus_bleu({"a b c"}, {{"a b c d"}}, sentence);
  EXPECT_NEAR(s.score, 100.0 * std::exp(1.0 - 4.0 / 3.0), 1e-9);
  EXPECT_NE(s.signature.find("|eff:yes|tok:none|"), std::string::npos) << s.signature;
  EXPECT_EQ(corpus_bleu({"a b c"}, {{"a b c d"}}, {.sacrebleu = true}).score, 0.0);
  // one unmatched order is smoothed ("exp"): 3-grams 0/1 -> 100 / (2 * 1)
  const BleuScore m = corpus_bleu({"a b x"}, {{"a b c"}}, sentence);
  EXPECT_NEAR(m.score, std::exp((std::log(200.0 / 3) + std::log(50.0) + std::log(50.0)) / 3.0),
              1e-9);
}

TEST(Chrf, MatchesSacrebleuPublishedExamples) {
  // The examples of the chrF metric card (computed there with sacreBLEU, chrF2, order 6).
  ChrfScore one =
      corpus_chrf({"The relationship between Obama and Netanyahu is not exactly friendly."},
                  {{"The ties between Obama and Netanyahu are not particularly friendly."}});
  EXPECT_NEAR(one.score, 61.576379378113785, 1e-6);
  ChrfScore two =
      corpus_chrf({"The relationship between cats and dogs is not exactly friendly.",
                   "a good bookshop is just a genteel black hole that knows how to read."},
                  {{"The relationship between dogs and cats is not exactly friendly.",
                    "A good bookshop is just a genteel Black Hole that knows how to read."}});
  EXPECT_NEAR(two.score, 84.64214891738334, 1e-6);
}

TEST(G2p, WordAndPhoneErrorRatesWithAlternatives) {
  std::map<std::string, std::vector<std::string>> refs = {
      {"READ", {"R IY D", "R EH D"}}, {"CAT", {"K AE T"}}, {"DOG", {"D AO G"}}};
  std::map<std::string, std::string> hyps = {
      {"READ", "R EH D"},    // equals the second alternative: right
      {"CAT", "K AH T"},     // one substitution of 3
      {"DOG", "D AO G Z"}};  // one insertion of 3
  G2pScore s = g2p_error_rates(hyps, refs);
  EXPECT_NEAR(s.wer, 200.0 / 3, 1e-9);
  EXPECT_EQ(s.phones, 9);
  EXPECT_NEAR(s.per, 200.0 / 9, 1e-9);
  hyps.erase("DOG");
  EXPECT_THROW(g2p_error_rates(hyps, refs), Error);
  EXPECT_EQ(edit_distance({"a", "b", "c"}, {"a", "c"}), 1);
}

TEST(Bleu, AgreesWithNltkCorpusBleu) {
  fs::path val = fs::path(HEED_SOURCE_DIR) / ".." / "shared" / "data" / "multi30k" / "tok" /
                 "val.lc.norm.tok.de";
  if (!fs::exists(val)) GTEST_SKIP() << "no ../shared/data";
  // Debian's python3 (where python3-nltk installs), not whatever python3 is first on PATH.
  const std::string py = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  if (std::system((py + " -c 'import nltk' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "python3-nltk is not installed";
  // Hypotheses: the references with random words dropped, duplicated and swapped.
  // NLTK counts a sentence with no n-grams of order n as 1 in that order's denominator
  // (max(1, count)); multi-bleu.perl and heed count 0. Sentences of >= 4 tokens on both sides
  // compare the two where they are defined alike (the file has a few of 3 tokens).
  std::vector<std::string> refs, hyps;
  for (auto& r : read_lines(val.string()))
    if (split_words(r).size() >= 4) refs.push_back(r);
  Rng rng(5);
  for (const auto& r : refs) {
    auto w = split_words(r);
    std::vector<std::string> h;
    for (size_t i = 0; i < w.size(); ++i) {
      float u = rng.uniform();
      if (u < 0.1f) continue;
      h.push_back(w[i]);
      if (u > 0.95f) h.push_back(w[i]);
    }
    if (h.size() > 2 && rng.uniform() < 0.3f) std::swap(h[0], h[1]);
    hyps.push_back(join_words(h.size() >= 4 ? h : w));
  }
  fs::path dir = fs::temp_directory_path() / ("heed_nltk_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "hyp") << [&] {
    std::string s;
    for (auto& h : hyps) s += h + "\n";
    return s;
  }();
  std::ofstream(dir / "bleu.py") << R"(import sys
from nltk.translate.bleu_score import corpus_bleu
hyp = [l.split() for l in open(sys.argv[1], encoding='utf-8').read().split('\n')[:-1]]
ref = [[l.split()] for l in open(sys.argv[2], encoding='utf-8').read().split('\n')[:-1]]
print('%.10f' % (100 * corpus_bleu(ref, hyp)))
)";
  std::ofstream(dir / "ref") << [&] {
    std::string s;
    for (auto& r : refs) s += r + "\n";
    return s;
  }();
  std::string cmd = py + " " + (dir / "bleu.py").string() + " " + (dir / "hyp").string() + " " +
                    (dir / "ref").string();
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  double nltk = -1;
  ASSERT_EQ(fscanf(p, "%lf", &nltk), 1);
  pclose(p);
  fs::remove_all(dir);
  double ours = corpus_bleu(hyps, {refs}).score;
  EXPECT_NEAR(ours, nltk, 1e-6) << "heed " << ours << " vs NLTK " << nltk;
  EXPECT_GT(ours, 30.0);
  EXPECT_LT(ours, 90.0);
}

}  // namespace
}  // namespace heed
