// The Transformer's layers (Vaswani et al. 2017, section 3): positional encodings, the
// position-wise feed-forward network, and the encoder and decoder layers with their residual
// sub-layers, in either placement of layer normalisation:
//   post-LN (the paper):           x = LayerNorm(x + Dropout(Sublayer(x)))
//   pre-LN (Xiong et al. 2020):    x = x + Dropout(Sublayer(LayerNorm(x))), and a final
//                                  LayerNorm after the last layer
// TransformerEncoder is usable on its own (the classifier and G2P use it).
// Leaves out: embeddings and the output projection (models/transformer_seq2seq).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/autograd/ops.h"
#include "heed/nn/monotonic_multi_head_attention.h"
#include "heed/nn/multi_head_attention.h"
#include "heed/util/names.h"

namespace heed {

enum class NormPlacement { Pre, Post };
std::span<const Named<NormPlacement>> names(NormPlacement);  // "pre" | "post"
enum class FfnActivation { Relu, Gelu };
std::span<const Named<FfnActivation>> names(FfnActivation);  // "relu" | "gelu"
// The position table: sinusoidal (the paper's, fixed) or learned (a parameter).
enum class Positions { Sinusoidal, Learned };
std::span<const Named<Positions>> names(Positions);  // "sinusoidal" | "learned"

// One layer's sizes and choices, shared by every layer of a stack. The defaults are the
// paper's (post-LN); a family may start from others (the classifier's encoder: pre-LN).
struct TransformerLayerConfig {
  int64_t d_model = 256;
  int64_t heads = 8;
  int64_t ff = 1024;  // d_ff
  float dropout = 0.1f;
  NormPlacement norm = NormPlacement::Post;
  FfnActivation activation = FfnActivation::Relu;
  bool causal_encoder = false;  // encoder layers: position i attends to 0..i only (online)
  // Encoder layers, encoder_chunk C > 0: chunked self-attention, a streaming encoder (Chen et
  // al. 2021, "Developing real-time streaming Transformer transducer"; WeNet's chunk mask):
  // position i sees its chunk of C positions and the left_chunks C positions before it, and in
  // the first layer only also the `lookahead` positions past the chunk, so that the stack reads
  // `lookahead` positions ahead, not layers x lookahead. A stream computes each chunk once,
  // the last left_chunks C keys and values of every layer kept (TransformerEncoder::Stream).
  int64_t encoder_chunk = 0, left_chunks = 0, lookahead = 0;
  int64_t wait_k = 0;  // decoder layers, k > 0: output i attends to the first i + k
                       // source positions only (wait-k, Ma et al. 2019)
  // decoder layers: monotonic multihead attention over the encoder (Ma et al. 2020) instead of
  // soft cross-attention
  std::optional<MonotonicHeadsConfig> monotonic = std::nullopt;
  float layer_norm_eps = 1e-5f;  // every LayerNorm's epsilon (an imported model keeps its own)

  // Written into (read from) a model's config.json object: d_model, heads, ff, norm,
  // activation and the dropout under `dropout_key` (a classifier keeps "dropout" for its MLP).
  void to_json(nlohmann::json& j, const char* dropout_key = "dropout") const;
  static TransformerLayerConfig from_json(const nlohmann::json& j,
                                          const char* dropout_key = "dropout");
};

// PE(pos, 2i) = sin(pos / 10000^{2i/d}),  PE(pos, 2i+1) = cos(pos / 10000^{2i/d})  (eq. 3.5)
// as a table [positions, d].
Tensor sinusoidal_positions(int64_t positions, int64_t d);

// The input layer (sections 3.4 and 3.5): token embeddings scaled by sqrt(d) plus positions,
//   x_i = sqrt(d) E[w_i] + P[pos_i],   then dropout                                   [N, d]
// P is the sinusoidal table above or a learned one (the parameter "positions" of the scope,
// [max_positions, d]). The table E is passed in: models share or tie it. A recognizer's input
// is vectors instead of ids (a front end's, Dong et al. 2018): x_i = sqrt(d) v_i + P[pos_i].
class PositionalEmbedding {
 public:
  PositionalEmbedding(int64_t d, int64_t max_positions, Positions positions, float dropout,
                      const Scope& scope);
  Var forward(Graph& g, const Parameter& table, std::span<const int32_t> ids,
              std::span<const int32_t> positions) const;
  Var forward(Var vectors, std::span<const int32_t> positions) const;  // [N, d] -> [N, d]

 private:
  int64_t d_, max_positions_;
  float dropout_;
  Parameter* learned_ = nullptr;  // [max_positions, d]
  Tensor sinusoid_;               // [max_positions, d] when not learned
};

// FFN(x) = max(0, x W_1 + b_1) W_2 + b_2  (eq. 2; or GELU instead of max(0, .))
class FeedForward {
 public:
  FeedForward(const TransformerLayerConfig& c, const Scope& scope);
  Var forward(Var x) const;  // [..., d] -> [..., d]

 private:
  FfnActivation activation_;
  float dropout_;
  Parameter *W1_, *b1_, *W2_, *b2_;  // [ff, d], [ff], [d, ff], [d]
};

class LayerNorm {
 public:
  LayerNorm(int64_t d, const Scope& scope, float eps = 1e-5f);
  Var forward(Var x) const;

 private:
  Parameter *gamma_, *beta_;  // [d], [d]
  float eps_;
};

// One residual sub-layer around f, with the configured norm placement.
class Residual {
 public:
  Residual(const TransformerLayerConfig& c, const Scope& scope);
  template <class F>
  Var operator()(Var x, F&& f) const {
    return (*this)(x, x, std::forward<F>(f));
  }
  // f reads all the rows of x and gives those of `kept` (its first rows), which the residual
  // adds to: a chunk's positions and those it reads ahead (MultiHeadAttention::self_chunk).
  template <class F>
  Var operator()(Var x, Var kept, F&& f) const;

 private:
  NormPlacement norm_;
  float dropout_;
  LayerNorm ln_;
};

class TransformerEncoderLayer {
 public:
  // first: the stack's first layer (the one that reads the chunked attention's lookahead)
  TransformerEncoderLayer(const TransformerLayerConfig& c, const Scope& scope, bool first = true);
  // x [N, d], packed sequences (packing.h); `weights`: also the self-attention weights
  // [B, h, T, T] (no gradient)
  Var forward(Var x, const Packing& p, Tensor* weights = nullptr) const;
  // A causal layer, one more position of each of B sequences: x [B, d] attends over itself and
  // the earlier positions' keys and values in `cache` (and appends its own) -> [B, d], what
  // forward() gives that position (online decoding: a source that arrives a token at a time).
  Var step(Var x, KvCache& cache) const;
  // A chunked layer, the next chunk of one sequence: x [n, d] its positions and the lookahead's
  // rows after them (`ahead` of them: this layer's lookahead, or fewer at the sequence's end)
  // -> [n - ahead, d], what forward() gives the chunk, `window` carried between chunks.
  Var chunk_step(Var x, int64_t ahead, KvWindow& window) const;
  int64_t lookahead() const { return window_.right; }

 private:
  bool causal_;             // online: a prefix's states do not depend on what follows
  AttentionWindow window_;  // chunked (chunk > 0)
  MultiHeadAttention self_;
  FeedForward ff_;
  Residual r_self_, r_ff_;
};

class TransformerDecoderLayer {
 public:
  // attends = false: no cross-attention sub-layer (a lower layer whose monotonic heads were
  // pruned, MonotonicHeadsConfig::layers): self-attention and the feed-forward layer only.
  // follows: monotonic heads that follow the shared policy of a layer below
  // (MonotonicHeadsConfig::shared).
  TransformerDecoderLayer(const TransformerLayerConfig& c, const Scope& scope, bool attends = true,
                          bool follows = false);
  bool monotonic() const { return monotonic_.has_value(); }
  bool follows_policy() const { return monotonic_ && monotonic_->follows(); }
  bool attends() const { return r_cross_.has_value(); }
  // The encoder output's keys and values for this layer's cross-attention: packed memory
  // [N_s, d] -> [B, S, 2d] (monotonic heads with chunks: [B, S, 3d]); none (an invalid Var)
  // for a layer that does not attend.
  Var project_memory(Var memory, const Packing& src) const;
  // Soft cross-attention's keys of a projected memory transposed once for step()'s
  // memory_keys_t (MultiHeadAttention::transpose_memory_keys); an empty tensor for a layer that
  // does not attend or attends monotonically.
  Tensor transpose_memory_keys(Graph& g, Var memory_kv) const;
  // Monotonic cross-attention: the heads' stops for B decoder rows.
  MonotonicHeadsState make_heads_state(int64_t B) const { return monotonic_->make_state(B); }
  KvCache make_cache(Graph& g, int64_t B, int64_t capacity) const {
    return self_.make_cache(g, B, capacity);
  }
  // Teacher forcing: y [N_t, d] packed as tgt, causal self-attention, cross-attention over the
  // memory (wait_k > 0: output i over the source prefix j < i + k; the model's
  // TransformerLayerConfig::wait_k, or a batch's). Monotonic heads: `delays`, when given, gets
  // their expected delays [B, h, T], and `policy` the shared policy's alignment from the layer
  // that holds it to those that follow (MonotonicMultiHeadAttention::cross).
  Var forward(Var y, const Packing& tgt, Var memory_kv, std::span<const int32_t> src_lengths,
              int64_t wait_k, Var* delays = nullptr, Var* policy = nullptr) const;
  // One position y_t [B, d] with this layer's key/value cache (and its heads' stops when the
  // cross-attention is monotonic: a layer that follows the shared policy is given the policy
  // layer's). Rows r K .. r K + K - 1 attend to memory row r (K = rows_per_memory: a beam's K
  // hypotheses read their source's memory [B / K, S, 2d] once, as the K queries of one entry;
  // soft attention without wait-k only), and src_lengths are the memory rows' [B / K]. When
  // `weights` is given, it gets the cross-attention weights [B / K, h, K, S] of this step.
  // memory_keys_t: transpose_memory_keys of memory_kv, or nullptr (the same outputs).
  Var step(Var y, Var memory_kv, std::span<const int32_t> src_lengths, KvCache& cache,
           MonotonicHeadsState* heads, int64_t wait_k, Tensor* weights = nullptr,
           int64_t rows_per_memory = 1, const float* memory_keys_t = nullptr) const;

 private:
  MultiHeadAttention self_;
  std::optional<MultiHeadAttention> cross_;               // soft
  std::optional<MonotonicMultiHeadAttention> monotonic_;  // or monotonic
  FeedForward ff_;
  Residual r_self_;
  std::optional<Residual> r_cross_;  // none: the layer does not attend to the source
  Residual r_ff_;
};

// Stacked encoder layers (and the final LayerNorm of pre-LN): packed [N, d] -> [N, d];
// `last_weights`: also the last layer's self-attention weights [B, h, T, T]. In an inference
// graph each layer's intermediates are freed once the next layer's input is made
// (Graph::rewind): Vars made inside forward() other than its result are not kept.
class TransformerEncoder {
 public:
  TransformerEncoder(const TransformerLayerConfig& c, int64_t layers, const Scope& scope);
  Var forward(Var x, const Packing& p, Tensor* last_weights = nullptr) const;
  // Causal layers: one more position, x [B, d] -> [B, d] (TransformerEncoderLayer::step), with
  // one cache per layer.
  Var step(Var x, std::span<KvCache> caches) const;
  size_t layers() const { return layers_.size(); }

  // A chunked encoder (TransformerLayerConfig::encoder_chunk) reading one sequence as it
  // arrives: push(g, x [n, d]) gives the states [m, d] of the chunks its rows complete (a chunk
  // is complete once its C positions and the first layer's lookahead are there; m may be 0, an
  // invalid Var), finish(g) those of the rest, the last chunk shorter. Each position is computed
  // once, each layer keeping the last left_chunks C keys and values, so a chunk costs the same
  // however long the sequence has run. The states equal forward()'s over the whole sequence.
  class Stream {
   public:
    explicit Stream(const TransformerEncoder& encoder);
    Var push(Graph& g, Var x);
    Var finish(Graph& g);

   private:
    Var run(Graph& g, int64_t rows, int64_t ahead);  // the next chunk of `rows` positions
    Var drain(Graph& g, bool end);
    const TransformerEncoder& e_;
    int64_t d_;
    std::vector<float> pending_;  // [rows, d]: the inputs from the next chunk's first on
    std::vector<KvWindow> windows_;
  };
  Stream stream() const;

 private:
  std::vector<TransformerEncoderLayer> layers_;
  std::vector<LayerNorm> final_;  // one for pre-LN, none for post-LN
  int64_t chunk_ = 0;             // C when chunked
};

template <class F>
Var Residual::operator()(Var x, Var kept, F&& f) const {
  if (norm_ == NormPlacement::Pre) return kept + dropout(f(ln_.forward(x)), dropout_);
  return ln_.forward(kept + dropout(f(x), dropout_));
}

}  // namespace heed
