// Sentence classification (`heed train --task classify`): the self-attentive sentence
// embedding of Lin et al. 2017 over a BiLSTM, the pooling baselines it replaces, and the
// Transformer-encoder baseline (Vaswani et al. 2017's encoder; a [CLS] position as in BERT,
// Devlin et al. 2019).
//   H = BiLSTM(E w_1 .. E w_n)                           [n, 2u]  (section 2.1)
//     or H = TransformerEncoder(sqrt(d) E w_i + P_i)     [n, d]   (--model transformer)
//   M = A H,  A = softmax(W_s2 tanh(W_s1 H^T))           [r, 2u]  (nn/self_attention_pooling.h)
//     or a pooling baseline: max_t h_t | mean_t h_t | [->h_n ; <-h_1] (BiLSTM)
//     | h_0 of a [CLS] token put before the sentence (Transformer)       [2u] or [d]
//     or H = gated dilated convolutions (--model conv), or Kim 2014's n-gram maps with max
//     pooling (--model kim-cnn: c^ = max_t ReLU(conv_w(E w))_t for w = 3, 4, 5)
//   y = softmax(W_2 ReLU(W_1 flatten(M) + b_1) + b_2)              the MLP classifier
//     or y = softmax(W_2 dropout(M) + b_2) without the hidden layer (Kim's, --mlp-hidden 0)
//   loss = cross-entropy + penalty * ||A A^T - I||_F^2             (section 2.2)
// Word dropout (training only): each input token is replaced by <unk> with probability p, so
// that the classifier cannot lean on single rare words (the input-side regulariser of Iyyer et
// al. 2015 and Bowman et al. 2016, in its replace-by-<unk> form).
// Leaves out: reading data (data/labeled.h) and the training loop (train/).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/nn/self_attention_pooling.h"
#include "heed/nn/sequence_encoder.h"

namespace heed {

enum class Pooling { Attention, Max, Mean, Last, Cls };
std::span<const Named<Pooling>> names(Pooling);  // "attention" | "max" | "mean" | "last" | "cls"
const char* pooling_name(Pooling p);
Pooling parse_pooling(const std::string& s);  // an Error lists the names

struct ModelOptions;  // models/model_options.h

// The classifier families, one per sentence encoder (their rows in models/registry.cc): the
// name in config.json's "model" and --model (the command line's short name, an alias), the
// defaults each brings (configure) and its encoder's keys in config.json (from_json).
struct ClassifierConfig;
struct SelfAttentiveClassifier {  // a BiLSTM (Lin et al. 2017), self-attention by default
  static constexpr const char* kFamily = "self-attentive";
  static ClassifierConfig configure(const ModelOptions& o);
  static ClassifierConfig from_json(const nlohmann::json& j);
};
struct TransformerClassifier {  // a pre-LN Transformer encoder, mean pooling by default
  static constexpr const char* kFamily = "transformer-classifier";
  static constexpr const char* kAlias = "transformer";
  static ClassifierConfig configure(const ModelOptions& o);
  static ClassifierConfig from_json(const nlohmann::json& j);
};
struct ConvClassifier {  // gated dilated convolutions, max pooling by default
  static constexpr const char* kFamily = "conv-classifier";
  static constexpr const char* kAlias = "conv";
  static ClassifierConfig configure(const ModelOptions& o);
  static ClassifierConfig from_json(const nlohmann::json& j);
};
struct KimCnn {  // Kim 2014: widths 3, 4, 5, max over time, a linear classifier, dropout 0.5
  static constexpr const char* kFamily = "kim-cnn";
  static ClassifierConfig configure(const ModelOptions& o);
  static ClassifierConfig from_json(const nlohmann::json& j);
};

struct ClassifierConfig {
  // H: a BiLSTM (u per direction), a Transformer encoder, convolutions or Kim's n-gram maps; the
  // alternative is the family
  EncoderConfig encoder = RnnEncoderConfig{.cell = CellKind::Lstm, .embed = 300, .hidden = 300};
  Pooling pooling = Pooling::Attention;
  int64_t attn_dim = 350;    // d_a
  int64_t hops = 4;          // r
  int64_t mlp_hidden = 512;  // the classifier's hidden layer (0: none, a linear classifier)
  int64_t classes = 2;       // C
  float dropout = 0.5f;      // on the embeddings, between layers and in the classifier
  float word_dropout = 0.f;  // training: each token becomes <unk> with this probability
  bool lowercase = false;    // the input is lowercased before it is split (a model trained on SST
                             // trees, whose reader lowercases every word)
  float penalty = 0.f;       // coefficient of ||A A^T - I||_F^2 in the loss (attention only)
  float max_norm = 0.f;      // > 0: the output layer's class vectors kept within this L2 norm
  bool syntactic_attention = false;  // over the encoder's states (nn/syntactic_attention.h)

  int64_t vocab() const { return vocab_size(encoder); }  // V
  void set_vocab(int64_t v) { set_vocab_size(encoder, v); }
  int64_t annotation_dim() const;  // a row of H: 2u (BiLSTM), d_model (Transformer), C, maps |w|
  // Whether the model has attention over the tokens to show: the r hops (attention pooling),
  // or what the [CLS] position attends to in the last layer (Transformer, cls pooling); and
  // the name of row r of it.
  bool has_attention() const;
  std::string attention_row(int64_t r) const;
  int64_t features() const;      // the classifier's input size: r * annotation_dim, or it
  const char* family() const;    // config.json's "model": the encoder's family
  std::string describe() const;  // the encoder, for the training log
  nlohmann::json to_json() const;
  // The keys every family writes (pooling, MLP, ...), into `c`; nlohmann-json's exceptions
  // through, for the caller to name the file.
  static void read_shared(const nlohmann::json& j, ClassifierConfig& c);
};

// A padded, time-major batch of sentences.
struct ClassifyBatch {
  int64_t B = 0, S = 0;
  std::vector<int32_t> ids;      // [S, B], padding = Vocab::kPad
  std::vector<int32_t> lengths;  // [B]
  std::vector<int32_t> labels;   // [B] (empty when unknown)
};
ClassifyBatch make_classify_batch(const std::vector<std::vector<int32_t>>& sentences,
                                  std::span<const int32_t> labels = {});

// The batch of sentences [first, first + n) of `sentences` (with their labels, if any).
ClassifyBatch slice_classify_batch(const std::vector<std::vector<int32_t>>& sentences,
                                   const std::vector<int32_t>& labels, size_t first, size_t n);

class SentenceClassifier {
 public:
  SentenceClassifier(const ClassifierConfig& config, const Scope& scope);
  const ClassifierConfig& config() const { return config_; }
  struct Output {
    Var logits;   // [B, C]
    Var A;        // [B, r, S] the hops' attention (self-attention pooling), or with cls
                  // pooling and `attention` asked for: [B, 1, S], the last layer's weights
                  // from [CLS] to each token, mean of heads (the rest is on [CLS] itself)
    Var penalty;  // [] batch mean of ||A A^T - I||_F^2 (self-attention pooling only)
    Tensor tree;  // [B, S + 1, S] with `attention` and syntactic attention: its parent marginals
  };
  Output forward(Graph& g, const ClassifyBatch& b, bool attention = false) const;
  // Mean cross-entropy over the batch, plus the penalty term times its coefficient.
  Var loss(Graph& g, const ClassifyBatch& b) const;

 private:
  // H [B, S, D] (lengths as the batch's; [CLS] pooling: S + 1 with h_0 the [CLS] state);
  // `summary` gets the encoder's summary ([->h_n ; <-h_1] for the last-state baseline) when
  // given; cls_attention: also the [CLS] row of the last layer's weights, [B, 1, S]
  // tree: also syntactic attention's parent marginals, when it has them
  Var annotations(Graph& g, const ClassifyBatch& b, std::span<const int32_t> ids, Var* summary,
                  Var* cls_attention, Tensor* tree) const;
  ClassifierConfig config_;
  std::unique_ptr<SequenceEncoder> encoder_;     // any sequence encoder (nn/sequence_encoder.h)
  std::vector<SelfAttentionPooling> attention_;  // one, or none when pooling
  Parameter *W1_ = nullptr, *b1_ = nullptr;      // [M, F], [M] (none when M = 0)
  Parameter *W2_, *b2_;                          // [C, M or F], [C]
};

}  // namespace heed
