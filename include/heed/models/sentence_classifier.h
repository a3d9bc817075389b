// Sentence classification over a BiLSTM (`heed train --task classify`): the self-attentive
// sentence embedding of Lin et al. 2017 and the pooling baselines it replaces.
//   H = BiLSTM(E w_1 .. E w_n)                           [n, 2u]  (section 2.1)
//   M = A H,  A = softmax(W_s2 tanh(W_s1 H^T))           [r, 2u]  (nn/self_attention_pooling.h)
//     or a pooling baseline: max_t h_t | mean_t h_t | [->h_n ; <-h_1]   [2u]
//   y = softmax(W_2 ReLU(W_1 flatten(M) + b_1) + b_2)              the MLP classifier
//   loss = cross-entropy + penalty * ||A A^T - I||_F^2             (section 2.2)
// Word dropout (training only): each input token is replaced by <unk> with probability p, so
// that the classifier cannot lean on single rare words (the input-side regulariser of Iyyer et
// al. 2015 and Bowman et al. 2016, in its replace-by-<unk> form).
// Leaves out: reading data (data/labeled.h) and the training loop (train/).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/nn/rnn.h"
#include "heed/nn/self_attention_pooling.h"

namespace heed {

enum class Pooling { Attention, Max, Mean, Last };
const char* pooling_name(Pooling p);
Pooling parse_pooling(const std::string& s);  // "attention" | "max" | "mean" | "last"

struct ClassifierConfig {
  RnnEncoderConfig encoder{.cell = CellKind::Lstm, .embed = 300, .hidden = 300};  // u per direction
  Pooling pooling = Pooling::Attention;
  int64_t attn_dim = 350;    // d_a
  int64_t hops = 4;          // r
  int64_t mlp_hidden = 512;  // the classifier's hidden layer
  int64_t classes = 2;       // C
  float dropout = 0.5f;      // on the embeddings, between layers and in the classifier
  float word_dropout = 0.f;  // training: each token becomes <unk> with this probability
  float penalty = 0.f;       // coefficient of ||A A^T - I||_F^2 in the loss (attention only)

  int64_t features() const;  // the classifier's input size: r * 2u, or 2u
  nlohmann::json to_json() const;
  static ClassifierConfig from_json(const nlohmann::json& j);
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

class SentenceClassifier {
 public:
  SentenceClassifier(const ClassifierConfig& config, const Scope& scope);
  const ClassifierConfig& config() const { return config_; }
  struct Output {
    Var logits;   // [B, C]
    Var A;        // [B, r, S] the hops' attention (self-attention pooling only)
    Var penalty;  // [] batch mean of ||A A^T - I||_F^2 (self-attention pooling only)
  };
  Output forward(Graph& g, const ClassifyBatch& b) const;
  // Mean cross-entropy over the batch, plus the penalty term times its coefficient.
  Var loss(Graph& g, const ClassifyBatch& b) const;

 private:
  ClassifierConfig config_;
  RnnEncoder encoder_;
  std::vector<SelfAttentionPooling> attention_;  // one, or none when pooling
  Parameter *W1_, *b1_, *W2_, *b2_;              // [M, F], [M], [C, M], [C]
};

}  // namespace heed
