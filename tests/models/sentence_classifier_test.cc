// The self-attentive sentence classifier (Lin et al. 2017), its pooling baselines and the
// Transformer-encoder classifier: gradient check of the whole model with each encoder and
// pooling (penalty included), a toy task whose label is one keyword at a random position
// (learned, with the attention peaking on the keyword; learned through a [CLS] position by the
// Transformer), the trainer end to end on labelled files, and bad labelled lines reported with
// file and line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "heed/data/labeled.h"
#include "heed/data/vocab.h"
#include "heed/decode/classifier.h"
#include "heed/metrics/metrics.h"
#include "heed/models/registry.h"
#include "heed/models/sentence_classifier.h"
#include "heed/train/classifier_trainer.h"
#include "heed/train/optimizer.h"
#include "support/errors.h"
#include "support/gradcheck.h"

namespace fs = std::filesystem;

namespace heed {
namespace {

ClassifierConfig tiny(Pooling p, EncoderKind kind = EncoderKind::Rnn) {
  ClassifierConfig c;
  switch (kind) {
    case EncoderKind::Rnn:
      c.encoder = RnnEncoderConfig{
          .cell = CellKind::Lstm, .vocab = 9, .embed = 4, .hidden = 3, .bidirectional = true};
      break;
    case EncoderKind::Transformer:  // GELU: smooth, so that finite differences do not straddle
                                    // a ReLU kink
      c.encoder = TransformerEncoderConfig{.vocab = 9,
                                           .layer = {.d_model = 4,
                                                     .heads = 2,
                                                     .ff = 6,
                                                     .dropout = 0.f,
                                                     .norm = NormPlacement::Pre,
                                                     .activation = FfnActivation::Gelu},
                                           .layers = 2,
                                           .max_positions = 16};
      break;
    case EncoderKind::Conv:
      c.encoder = ConvEncoderConfig{.vocab = 9,
                                    .embed = 4,
                                    .channels = 3,
                                    .kernel = 3,
                                    .dilations = {1, 2},
                                    .max_positions = 16};
      break;
    case EncoderKind::Kim:
      c.encoder = KimEncoderConfig{.vocab = 9, .embed = 4, .widths = {1, 2, 3}, .maps = 2};
      break;
  }
  c.pooling = p;
  c.attn_dim = 4;
  c.hops = 2;
  c.mlp_hidden = 5;
  c.classes = 3;
  c.dropout = 0.f;
  c.penalty = 0.5f;
  return c;
}

using EncoderAndPooling = std::tuple<EncoderKind, Pooling>;
class EachPooling : public ::testing::TestWithParam<EncoderAndPooling> {
 protected:
  static ClassifierConfig config() {
    return tiny(std::get<1>(GetParam()), std::get<0>(GetParam()));
  }
};

TEST_P(EachPooling, WholeModelGradients) {
  ParameterStore store;
  Rng rng(2);
  SentenceClassifier model(config(), Scope(store, rng, "c"));
  ClassifyBatch b = make_classify_batch({{4, 5, 6, 7}, {8, 4}, {5}}, std::vector<int32_t>{0, 2, 1});
  std::vector<Parameter*> params(store.all().begin(), store.all().end());
  // the MLP's ReLU: pre-activations kept away from its kink (b1 starts at 0, W1 f is small),
  // where a finite difference would straddle it
  for (Parameter* p : params)
    if (p->name == "c/mlp/b1")
      p->value = testing::random_tensor(p->value.shape(), rng, -1, 1, 0.3f);
  testing::expect_gradients([&](Graph& g, std::vector<Var>&) { return model.loss(g, b); }, {},
                            {.eps = 5e-3f, .rtol = 3e-2f, .atol = 2e-3f, .max_entries = 8}, {},
                            params);
}

TEST_P(EachPooling, OtherSentencesPaddingChangesNoPrediction) {
  ParameterStore store;
  Rng rng(3);
  SentenceClassifier model(config(), Scope(store, rng, "c"));
  std::vector<std::vector<int32_t>> s = {{4, 5, 6, 7, 8}, {8, 4}, {5}};
  Graph g(Mode::Inference);
  Var together = model.forward(g, make_classify_batch(s)).logits;
  for (size_t i = 0; i < s.size(); ++i) {
    Var alone = model.forward(g, make_classify_batch({s[i]})).logits;
    for (int c = 0; c < 3; ++c)
      EXPECT_NEAR(alone.value().data()[c], together.value().data()[i * 3 + c], 1e-5f);
  }
}

TEST(SentenceClassifier, WordDropoutOnlyInTraining) {
  ClassifierConfig c = tiny(Pooling::Mean);
  c.word_dropout = 1.f;  // every token -> <unk>: two sentences of one length look the same
  ParameterStore store;
  Rng rng(4);
  SentenceClassifier model(c, Scope(store, rng, "c"));
  ClassifyBatch b = make_classify_batch({{4, 5, 6}, {7, 8, 4}});
  Graph train(Mode::Train, 1), infer(Mode::Inference);
  const float* t = model.forward(train, b).logits.value().data();
  const float* i = model.forward(infer, b).logits.value().data();
  for (int k = 0; k < 3; ++k) EXPECT_FLOAT_EQ(t[k], t[3 + k]);
  EXPECT_NE(i[0], i[3]);
}

constexpr const char* kEncoderNames[] = {"bilstm_", "transformer_", "conv_", "kim_"};
INSTANTIATE_TEST_SUITE_P(
    All, EachPooling,
    ::testing::Values(EncoderAndPooling{EncoderKind::Rnn, Pooling::Attention},
                      EncoderAndPooling{EncoderKind::Rnn, Pooling::Max},
                      EncoderAndPooling{EncoderKind::Rnn, Pooling::Mean},
                      EncoderAndPooling{EncoderKind::Rnn, Pooling::Last},
                      EncoderAndPooling{EncoderKind::Transformer, Pooling::Attention},
                      EncoderAndPooling{EncoderKind::Transformer, Pooling::Max},
                      EncoderAndPooling{EncoderKind::Transformer, Pooling::Mean},
                      EncoderAndPooling{EncoderKind::Transformer, Pooling::Cls},
                      EncoderAndPooling{EncoderKind::Conv, Pooling::Attention},
                      EncoderAndPooling{EncoderKind::Conv, Pooling::Max},
                      // (Kim's ReLU: mean pooling put a pre-activation of this case within
                      // a finite difference of the kink; max pooling's case is clear of it)
                      EncoderAndPooling{EncoderKind::Kim, Pooling::Max}),
    [](const auto& info) {
      return std::string(kEncoderNames[static_cast<int>(std::get<0>(info.param))]) +
             pooling_name(std::get<1>(info.param));
    });

TEST(SentenceClassifier, PoolingThatDoesNotFitTheEncoderIsRefused) {
  ParameterStore store;
  Rng rng(5);
  EXPECT_NE(testing::error_of([&] {
              SentenceClassifier(tiny(Pooling::Cls), Scope(store, rng, "a"));
            }).find("--pooling cls"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] {
              SentenceClassifier(tiny(Pooling::Last, EncoderKind::Transformer),
                                 Scope(store, rng, "b"));
            }).find("--pooling last"),
            std::string::npos);
}

TEST(SentenceClassifier, ConfigRoundTripsThroughJson) {
  for (EncoderKind kind :
       {EncoderKind::Rnn, EncoderKind::Transformer, EncoderKind::Conv, EncoderKind::Kim}) {
    ClassifierConfig c = tiny(Pooling::Max, kind);
    c.set_vocab(11);
    const nlohmann::json j = c.to_json();
    EXPECT_TRUE(is_classifier_config(j));
    ClassifierConfig back = classifier_config(j, "test");
    EXPECT_EQ(back.to_json(), j);
    EXPECT_EQ(back.encoder.index(), c.encoder.index());
    EXPECT_EQ(back.vocab(), 11);
    EXPECT_EQ(back.features(), c.features());
  }
  ClassifierConfig kim = tiny(Pooling::Max, EncoderKind::Kim);
  EXPECT_FALSE(kim.to_json().contains("max_norm"));  // unset: as every older model
  kim.max_norm = 3.f;
  EXPECT_EQ(classifier_config(kim.to_json(), "test").max_norm, 3.f);
  ParameterStore store;
  Rng rng(1);
  const SentenceClassifier model(kim, Scope(store, rng, "k"));
  EXPECT_EQ(store.get("k/mlp/W2").max_row_norm, 3.f);  // the output layer's class vectors
  EXPECT_FALSE(is_classifier_config(nlohmann::json{{"model", "transformer"}}));
}

// Sentences of filler tokens with one keyword (ids 4 .. 4+K-1) at a random position; the label
// is which keyword. Returns the sentences, labels and keyword positions.
constexpr int kKeywords = 8, kFiller = 16;
struct Keyword {
  std::vector<std::vector<int32_t>> s;
  std::vector<int32_t> y, at;
};
Keyword keyword_task(Rng& rng, int n, int keywords = kKeywords) {
  Keyword k;
  for (int i = 0; i < n; ++i) {
    const auto len = static_cast<int32_t>(8 + rng.below(17));
    std::vector<int32_t> s;
    for (int32_t t = 0; t < len; ++t)
      s.push_back(static_cast<int32_t>(4 + kKeywords + rng.below(kFiller)));
    const auto at = static_cast<int32_t>(rng.below(len));
    const auto y = static_cast<int32_t>(rng.below(keywords));
    s[at] = 4 + y;
    k.s.push_back(s);
    k.y.push_back(y);
    k.at.push_back(at);
  }
  return k;
}

// 400 Adam steps on batches of 32 keyword sentences, gradients clipped at 5, the rate rising
// linearly over `warmup` steps.
void train_on_keywords(const SentenceClassifier& model, ParameterStore& store, Rng& rng, float lr,
                       int warmup) {
  Optimizer opt({}, store);
  Graph g;
  for (int step = 0; step < 400; ++step) {
    Keyword k = keyword_task(rng, 32);
    g.backward(model.loss(g, make_classify_batch(k.s, k.y)));
    clip_grad_norm(store, 5.0);
    opt.step(warmup > 0 ? std::min(1.f, static_cast<float>(step + 1) / warmup) * lr : lr);
    g.clear();
  }
}

// How many rows of logits [n, kKeywords] have their maximum at the label.
int correct(Var logits, const std::vector<int32_t>& y) {
  int right = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const float* z = logits.value().data() + i * kKeywords;
    right += std::max_element(z, z + kKeywords) - z == y[i];
  }
  return right;
}

TEST(SelfAttentiveClassifier, LearnsTheKeywordAndAttendsToIt) {
  ParameterStore store;
  Rng rng(7);
  ClassifierConfig c;
  c.encoder = RnnEncoderConfig{
      .cell = CellKind::Lstm, .vocab = 4 + kKeywords + kFiller, .embed = 16, .hidden = 4};
  c.attn_dim = 16;
  c.hops = 1;
  c.mlp_hidden = 16;
  c.classes = kKeywords;
  c.dropout = 0.f;
  SentenceClassifier model(c, Scope(store, rng, "c"));
  train_on_keywords(model, store, rng, 5e-3f, 0);
  Rng test_rng(99);
  Keyword k = keyword_task(test_rng, 200);
  Graph inf(Mode::Inference);
  ClassifyBatch b = make_classify_batch(k.s, k.y);
  auto o = model.forward(inf, b);
  const int right = correct(o.logits, k.y);
  int peaks = 0;
  for (int i = 0; i < 200; ++i) {
    const float* a = o.A.value().data() + static_cast<int64_t>(i) * b.S;  // hop 0 over [S]
    const auto peak = std::max_element(a, a + b.lengths[i]) - a;
    peaks += peak == k.at[i];
  }
  double wk = 0, wu = 0;  // mean weight on the keyword, and 1 / length
  for (int i = 0; i < 200; ++i) {
    wk += o.A.value().data()[static_cast<int64_t>(i) * b.S + k.at[i]];
    wu += 1.0 / b.lengths[i];
  }
  EXPECT_GE(right, 196) << "accuracy on the keyword task";
  // chance: 1 in 14 positions; a BiLSTM spreads the keyword to its neighbours' states, less so
  // with a small state (with 16 units the peak is on the keyword or next to it in half)
  EXPECT_GE(peaks, 150) << "the attention's peak is on the keyword";
  EXPECT_GT(wk, 5 * wu) << "weight on the keyword against a uniform attention";
}

// Kim 2014's CNN: n-gram detectors and max over time find one keyword anywhere, without a
// hidden layer (the linear classifier over c^).
TEST(KimCnn, LearnsTheKeyword) {
  ParameterStore store;
  Rng rng(9);
  ClassifierConfig c;
  c.encoder =
      KimEncoderConfig{.vocab = 4 + kKeywords + kFiller, .embed = 16, .widths = {2, 3}, .maps = 8};
  c.pooling = Pooling::Max;
  c.mlp_hidden = 0;
  c.classes = kKeywords;
  c.dropout = 0.f;
  SentenceClassifier model(c, Scope(store, rng, "c"));
  EXPECT_EQ(c.features(), 16);
  train_on_keywords(model, store, rng, 5e-3f, 0);
  Rng test_rng(99);
  Keyword k = keyword_task(test_rng, 200);
  Graph inf(Mode::Inference);
  EXPECT_GE(correct(model.forward(inf, make_classify_batch(k.s, k.y)).logits, k.y), 196);
}

TEST(TransformerClassifier, LearnsTheKeywordThroughItsClsPosition) {
  ParameterStore store;
  Rng rng(8);
  ClassifierConfig c;
  c.encoder = TransformerEncoderConfig{
      .vocab = 4 + kKeywords + kFiller,
      .layer = {.d_model = 16, .heads = 2, .ff = 32, .dropout = 0.f, .norm = NormPlacement::Pre},
      .layers = 1};
  c.pooling = Pooling::Cls;  // the sentence reaches the classifier only through [CLS]'s attention
  c.mlp_hidden = 16;
  c.classes = kKeywords;
  c.dropout = 0.f;
  SentenceClassifier model(c, Scope(store, rng, "c"));
  train_on_keywords(model, store, rng, 3e-3f, /*warmup=*/50);
  Rng test_rng(99);
  Keyword k = keyword_task(test_rng, 200);
  Graph inf(Mode::Inference);
  const ClassifyBatch b = make_classify_batch(k.s, k.y);
  SentenceClassifier::Output o = model.forward(inf, b, /*attention=*/true);
  // what [CLS] attends to: [B, 1, S], on the real tokens only, at most 1 in all
  ASSERT_EQ(o.A.shape(), (Shape{200, 1, b.S}));
  int peaks = 0;
  for (int i = 0; i < 200; ++i) {
    const float* a = o.A.value().data() + static_cast<int64_t>(i) * b.S;
    float sum = 0;
    for (int64_t t = 0; t < b.S; ++t) {
      EXPECT_GE(a[t], 0.f);
      if (t >= b.lengths[i]) {
        EXPECT_EQ(a[t], 0.f) << "padding";
      }
      sum += a[t];
    }
    EXPECT_LE(sum, 1.f + 1e-5f);
    peaks += std::max_element(a, a + b.lengths[i]) - a == k.at[i];
  }
  // one layer: the keyword reaches [CLS] only through this attention
  EXPECT_GE(peaks, 150) << "the [CLS] attention's peak is on the keyword";
  EXPECT_GE(correct(o.logits, k.y), 196) << "accuracy on the keyword task";
}

struct Files {
  fs::path dir = fs::temp_directory_path() / ("heed_classify_" + std::to_string(::getpid()));
  Files() { fs::create_directories(dir); }
  ~Files() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
  // The keyword task as SST-style "<label> <sentence>" lines of words.
  std::string task(const std::string& name, int n, uint64_t seed) {
    Rng rng(seed);
    Keyword k = keyword_task(rng, n, 2);
    std::ostringstream s;
    for (int i = 0; i < n; ++i) {
      s << k.y[i];
      for (int32_t id : k.s[i]) s << (id == 4 ? " awful" : id == 5 ? " great" : " w") << id;
      s << "\n";
    }
    return write(name, s.str());
  }
};

TEST(ClassifierTrainer, LearnsFromFilesAndClassifiesWithTheSavedModel) {
  Files f;
  ClassifyTrainConfig c;
  c.train = f.task("train", 800, 1);
  c.valid = f.task("dev", 100, 2);
  c.test = f.task("test", 100, 3);
  c.model.encoder = RnnEncoderConfig{.cell = CellKind::Lstm, .embed = 16, .hidden = 16};
  c.model.attn_dim = c.model.mlp_hidden = 16;
  c.model.hops = 2;
  c.model.penalty = 0.1f;
  c.model.dropout = 0.1f;
  c.batch_size = 16;
  c.epochs = 4;
  c.lr = 5e-3f;
  c.save_dir = (f.dir / "model").string();
  std::ostringstream log;
  ClassifyResult r = train_classifier(c, log);
  EXPECT_GE(r.loop.best_metric, 95.0) << log.str();
  EXPECT_GE(r.test_accuracy, 95.0) << log.str();
  auto m = load_classifier(c.save_dir);
  LabeledCorpus test = read_labeled(c.test, 2);
  std::vector<int32_t> hyp;
  for (const Prediction& p : classify(*m, test.texts, {.name = "test"})) {
    hyp.push_back(p.label);
    EXPECT_EQ(p.attention.size(), 2u);
    EXPECT_EQ(p.attention[0].size(), p.tokens.size());
  }
  EXPECT_NEAR(accuracy(test.labels, hyp).accuracy, r.test_accuracy, 1e-9);
}

TEST(ClassifierTrainer, TransformerEncoderFromFilesAndBack) {
  Files f;
  ClassifyTrainConfig c;
  c.train = f.task("train", 800, 1);
  c.valid = f.task("dev", 100, 2);
  c.model.encoder = TransformerEncoderConfig{
      .layer = {.d_model = 16, .heads = 2, .ff = 32, .dropout = 0.1f, .norm = NormPlacement::Pre}};
  c.model.pooling = Pooling::Cls;
  c.model.mlp_hidden = 16;
  c.model.dropout = 0.1f;
  c.batch_size = 16;
  c.epochs = 4;
  c.lr = 3e-3f;
  c.warmup = 50;
  c.save_dir = (f.dir / "model").string();
  std::ostringstream log;
  ClassifyResult r = train_classifier(c, log);
  EXPECT_GE(r.loop.best_metric, 95.0) << log.str();
  auto m = load_classifier(c.save_dir);
  LabeledCorpus dev = read_labeled(c.valid, 2);
  std::vector<int32_t> hyp;
  for (const Prediction& p : classify(*m, dev.texts, {.name = "dev"})) {
    hyp.push_back(p.label);
    ASSERT_EQ(p.attention.size(), 1u);  // [CLS]'s row over the tokens
    EXPECT_EQ(p.attention[0].size(), p.tokens.size());
  }
  EXPECT_NEAR(accuracy(dev.labels, hyp).accuracy, r.loop.best_metric, 1e-9);
  // without attention asked for: the same labels and probabilities, no attention rows
  const auto with = classify(*m, dev.texts, {.name = "dev"});
  const auto without = classify(*m, dev.texts, {.attention = false, .name = "dev"});
  ASSERT_EQ(without.size(), with.size());
  for (size_t i = 0; i < with.size(); ++i) {
    EXPECT_EQ(without[i].label, with[i].label);
    EXPECT_EQ(without[i].probs, with[i].probs);
    EXPECT_TRUE(without[i].attention.empty());
  }
}

// --weight-decay makes the loop's Adam AdamW: the same run with decay ends with smaller weights.
TEST(ClassifierTrainer, WeightDecayShrinksTheWeights) {
  Files f;
  auto norm_after = [&](float wd, const std::string& name) {
    ClassifyTrainConfig c;
    c.train = f.task("train", 400, 1);
    c.valid = f.task("dev", 50, 2);
    c.model.encoder = RnnEncoderConfig{.cell = CellKind::Lstm, .embed = 8, .hidden = 8};
    c.model.attn_dim = c.model.mlp_hidden = 8;
    c.batch_size = 16;
    c.epochs = 1;
    c.lr = 5e-3f;
    c.weight_decay = wd;
    c.save_dir = (f.dir / name).string();
    std::ostringstream log;
    train_classifier(c, log);
    double sq = 0;
    const auto m = load_classifier(c.save_dir);
    for (const Parameter* p : m->params.all())
      for (float x : p->value.span()) sq += static_cast<double>(x) * x;
    return sq;
  };
  EXPECT_LT(norm_after(1.0f, "decayed"), 0.9 * norm_after(0.f, "plain"));
}

TEST(Labeled, BadLinesNameFileAndLine) {
  Files f;
  using testing::error_of;
  auto err = [&](const std::string& text, int32_t classes = 0) {
    std::string p = f.write("bad.txt", text);
    return error_of([&] { read_labeled(p, classes); });
  };
  EXPECT_NE(err("1 fine\n 0 leading space\n").find("bad.txt:2: no label"), std::string::npos);
  EXPECT_NE(err("1 fine\nfine too\n").find("bad.txt:2: the label 'fine'"), std::string::npos);
  EXPECT_NE(err("1 fine\n0\n").find("bad.txt:2: a label without a sentence"), std::string::npos);
  EXPECT_NE(err("1 a\n-1 b\n").find("bad.txt:2:"), std::string::npos);
  EXPECT_NE(err("0 a\n1 b\n5 c\n", 2).find("bad.txt:3: label 5 is out of range"),
            std::string::npos);
  LabeledCorpus ok = read_labeled(f.write("ok.txt", "2 a b\n0 c\n"));
  EXPECT_EQ(ok.classes, 3);
  EXPECT_EQ(ok.texts, (std::vector<std::string>{"a b", "c"}));
}

TEST(Accuracy, CountsAndConfusion) {
  AccuracyScore a = accuracy({0, 1, 1, 2}, {0, 1, 0, 2});
  EXPECT_DOUBLE_EQ(a.accuracy, 75.0);
  EXPECT_EQ(a.confusion[1][0], 1);
  EXPECT_EQ(a.confusion[1][1], 1);
  EXPECT_NE(a.str().find("acc = 75.00 (3/4)"), std::string::npos);
}

}  // namespace
}  // namespace heed
