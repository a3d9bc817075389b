// The inference API on the golden models (tests/golden/models, made by an older binary):
// hypotheses hang together (text, per-token log-probabilities summing to the total, the
// length-normalised score, attention rows over the source), scoring a translation gives back
// its log-probabilities token by token (one model and an ensemble), a G2P model reads CMUdict
// entries and writes them, and the Classifier agrees with the goldens' labels.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "heed/data/text.h"
#include "heed/decode/classifier.h"
#include "heed/decode/translator.h"
#include "heed/io/safetensors.h"
#include "support/errors.h"
#include "support/model_copy.h"
#include "support/temp_dir.h"

namespace heed {
namespace {

const std::filesystem::path kGolden = std::filesystem::path(HEED_SOURCE_DIR) / "tests" / "golden";

std::string model(const char* name) {
  return (kGolden / "models" / name).string();
}

std::vector<std::string> entries(size_t n) {
  auto lines = read_lines((kGolden / "inputs" / "cmudict.txt").string());
  lines.resize(n);
  return lines;
}

void expect_scored_alike(const Translator& t, const std::vector<std::string>& in) {
  const TranslationOptions o{
      .beam_size = 4, .num_hypotheses = 3, .length_penalty = 0.6, .return_attention = true};
  const auto results = t.translate(in, o);
  ASSERT_EQ(results.size(), in.size());
  std::vector<std::string> sources, targets;
  std::vector<const TranslationHypothesis*> hyps;
  for (size_t i = 0; i < in.size(); ++i) {
    const TranslationResult& r = results[i];
    EXPECT_EQ(r.input, in[i].substr(0, in[i].find("  ")));  // G2P: the word of the entry
    ASSERT_EQ(r.hypotheses.size(), 3U);
    for (const TranslationHypothesis& h : r.hypotheses) {
      EXPECT_EQ(h.text, t.text_format().tgt_seg.join(h.tokens));
      double sum = 0;
      for (float lp : h.token_log_probs) sum += lp;
      EXPECT_NEAR(sum, h.log_prob, 1e-4);
      const auto len = static_cast<double>(h.tokens.size() + 1);
      EXPECT_NEAR(h.score, h.log_prob / std::pow(len, 0.6), 1e-9);
      ASSERT_EQ(h.attention.size(), h.token_log_probs.size());
      for (const auto& row : h.attention) EXPECT_EQ(row.size(), r.source.size());
      EXPECT_EQ(t.output_line(r, h), r.input + "  " + h.text);
      if (h.token_log_probs.size() == h.tokens.size() + 1) {  // finished with EOS
        sources.push_back(in[i]);
        targets.push_back(h.text);
        hyps.push_back(&h);
      }
    }
    EXPECT_GE(r.hypotheses[0].score, r.hypotheses[1].score);
  }
  ASSERT_GT(targets.size(), 20U);
  const auto scored = t.score(sources, targets, {.max_batch_size = 7, .return_attention = true});
  for (size_t k = 0; k < scored.size(); ++k) {
    EXPECT_NEAR(scored[k].log_prob, hyps[k]->log_prob, 1e-4) << targets[k];
    ASSERT_EQ(scored[k].token_log_probs.size(), hyps[k]->token_log_probs.size());
    for (size_t j = 0; j < scored[k].token_log_probs.size(); ++j)
      EXPECT_NEAR(scored[k].token_log_probs[j], hyps[k]->token_log_probs[j], 1e-4);
    ASSERT_EQ(scored[k].attention.size(), hyps[k]->attention.size());
    for (size_t j = 0; j < scored[k].attention.size(); ++j)
      for (size_t s = 0; s < scored[k].attention[j].size(); ++s)
        EXPECT_NEAR(scored[k].attention[j][s], hyps[k]->attention[j][s], 1e-5);
  }
}

TEST(Translator, ScoringATranslationGivesItsLogProbabilities) {
  for (const char* name : {"rnn-bahdanau", "rnn-luong-general", "transformer"}) {
    SCOPED_TRACE(name);
    expect_scored_alike(Translator({model(name)}), entries(40));
  }
}

TEST(Translator, AnEnsembleScoresAsItSearches) {
  expect_scored_alike(Translator({model("rnn-bahdanau"), model("transformer")}), entries(40));
}

TEST(Translator, OutputsStopAtTheLengthLimit) {
  const Translator t({model("rnn-bahdanau")});
  for (int beam : {1, 3}) {
    const auto results = t.translate(entries(40), {.beam_size = beam, .max_decoding_length = 2});
    int cut = 0;
    for (const auto& r : results) {
      const TranslationHypothesis& h = r.hypotheses.front();
      EXPECT_LE(h.tokens.size(), 2U);
      // cut at the limit: no EOS scored
      cut += h.token_log_probs.size() == h.tokens.size();
    }
    EXPECT_GT(cut, 0) << "beam " << beam;  // the golden outputs are mostly longer than 2
  }
}

TEST(Translator, BadRequestsAreErrors) {
  const Translator t({model("rnn-bahdanau")});
  EXPECT_NE(testing::error_of([&] { t.score({"ABC"}, {}); }).find("1 sources but 0 targets"),
            std::string::npos);
  EXPECT_THROW(t.translate({"ABC"}, {.beam_size = 2, .num_hypotheses = 3}), Error);
  EXPECT_THROW(t.translate({"ABC"}, {.beam_size = 0}), Error);
  EXPECT_THROW(Translator({model("classifier-attention")}), Error);  // not an encoder-decoder
  EXPECT_THROW(Translator({model("rnn-bahdanau")}, {.threads = -1}), Error);
}

// Finite weights whose arithmetic overflows (a corrupt or diverged model; the fuzzer's find)
// are an error at the first step, not empty or garbage outputs.
TEST(Translator, AModelWhoseScoresOverflowIsAnError) {
  for (const char* name : {"transformer", "rnn-bahdanau"}) {
    SCOPED_TRACE(name);
    testing::TempDir dir;
    testing::copy_changed(model(name), dir / "m",
                          [](const std::string&, float v) { return v * 1e30F; });
    const Translator t({dir / "m"});
    for (int beam : {1, 3})
      EXPECT_NE(testing::error_of([&] {
                  t.translate(entries(2), {.beam_size = beam});
                }).find("scores are not finite at output step 1"),
                std::string::npos);
    EXPECT_NE(testing::error_of([&] { t.score({"ABC"}, {"AH B"}); }).find("not finite"),
              std::string::npos);
  }
  testing::TempDir dir;
  // a hidden layer at the edge of float's range: the output layer's sums overflow
  testing::copy_changed(model("classifier-attention"), dir / "c",
                        [](const std::string& name, float v) {
                          return name == "mlp/b1" ? 3e38F : name == "mlp/W2" ? 1.F : v;
                        });
  EXPECT_NE(testing::error_of([&] {
              Classifier(dir / "c").classify({"a fine film"});
            }).find("scores are not finite"),
            std::string::npos);
}

TEST(Classifier, GivesTheGoldenLabels) {
  const auto lines = read_lines((kGolden / "inputs" / "sst.txt").string());
  const auto golden = read_lines((kGolden / "outputs" / "classifier-attention.txt").string());
  const Classifier c(model("classifier-attention"));
  const auto preds = c.classify(lines);
  ASSERT_EQ(preds.size(), golden.size());
  for (size_t i = 0; i < preds.size(); ++i) {
    EXPECT_EQ(std::to_string(preds[i].label), golden[i].substr(0, golden[i].find('\t')));
    EXPECT_EQ(preds[i].attention.size(), 2U);  // two hops
  }
}

// An ensemble of classifiers: the mean of its members' class probabilities, the label its argmax,
// the tokens and attention the first member's; members with different classes are refused.
TEST(Classifier, AnEnsembleAveragesItsMembersProbabilities) {
  const auto lines = read_lines((kGolden / "inputs" / "sst.txt").string());
  testing::TempDir dir;
  const std::string a = model("classifier-attention"), b = model("classifier-transformer");
  // a third member leaning to class 0 (the first says 1 for every line), so that the ensemble's
  // label is not always the first's
  const std::string c = dir / "leaning";
  const Tensor b2 = read_safetensors(a + "/model.safetensors").tensors.at("mlp/b2");
  const std::vector<float> leaning = {b2.data()[0] + 1.5F, b2.data()[1] - 1.5F};
  testing::copy_replacing(a, c, {{"mlp/b2", Tensor::from(b2.shape(), leaning)}});
  const auto pa = Classifier(a).classify(lines), pb = Classifier(b).classify(lines),
             pc = Classifier(c).classify(lines);
  const Classifier abc({a, b, c});
  EXPECT_EQ(abc.size(), 3U);
  const auto p = abc.classify(lines);
  ASSERT_EQ(p.size(), lines.size());
  int differs = 0;  // lines where the ensemble's label is not the first member's
  for (size_t i = 0; i < p.size(); ++i) {
    ASSERT_EQ(p[i].probs.size(), 2U);
    for (size_t k = 0; k < 2; ++k)
      EXPECT_NEAR(p[i].probs[k], (pa[i].probs[k] + pb[i].probs[k] + pc[i].probs[k]) / 3, 1e-6)
          << "line " << i;
    EXPECT_EQ(p[i].label, p[i].probs[1] > p[i].probs[0] ? 1 : 0) << "line " << i;
    EXPECT_EQ(p[i].tokens, pa[i].tokens);
    EXPECT_EQ(p[i].attention, pa[i].attention);
    differs += p[i].label != pa[i].label;
  }
  EXPECT_GT(differs, 0) << "the members should disagree somewhere for this test to bite";
  // one directory: the model itself
  const auto single = Classifier(std::vector<std::string>{a}).classify(lines);
  for (size_t i = 0; i < p.size(); ++i) EXPECT_EQ(single[i].probs, pa[i].probs);

  // a member with three classes
  const std::string c3 = dir / "c3";
  Shape W2 = read_safetensors(a + "/model.safetensors").tensors.at("mlp/W2").shape();
  W2[0] = 3;
  testing::copy_replacing(
      a, c3, {{"mlp/W2", Tensor::full(W2, 0.1F)}, {"mlp/b2", Tensor::zeros(Shape{3})}});
  {
    std::ifstream in(c3 + "/config.json");
    nlohmann::json config = nlohmann::json::parse(in);
    config["classes"] = 3;
    std::ofstream(c3 + "/config.json") << config.dump();
  }
  EXPECT_EQ(Classifier(c3).classify(lines).front().probs.size(), 3U);
  const std::string error = testing::error_of([&] { Classifier({a, c3}); });
  EXPECT_NE(error.find("has 3 classes and"), std::string::npos) << error;
  EXPECT_NE(error.find("c3"), std::string::npos) << error;
}

}  // namespace
}  // namespace heed
