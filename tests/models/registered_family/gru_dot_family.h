// A model family that heed's sources do not know: registered from the test tree, to show what
// adding a family takes — this file and its .cc (a config, a model, a row) and one call to
// register_model_family; no file of cli/, train/ or models/ changes. It is a small GRU
// encoder-decoder with Luong's dot attention (its model wraps heed's RnnSeq2Seq), sized by
// --embed and --hidden (both 16 unless given).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "heed/models/registry.h"

namespace heed::testing {

struct GruDotConfig {
  static constexpr const char* kFamily = "test-gru-dot";
  int64_t src_vocab = 0, tgt_vocab = 0;
  int64_t embed = 16, hidden = 16;

  static GruDotConfig configure(const ModelOptions& o);
  nlohmann::json to_json() const;
  static GruDotConfig from_json(const nlohmann::json& j);
  std::string describe() const;
  void set_vocabularies(int64_t src, int64_t tgt);
  bool joint_vocabulary() const { return false; }
  RnnSeq2SeqConfig rnn() const;  // the model it builds
};

class GruDotModel final : public Seq2SeqModel {
 public:
  GruDotModel(const GruDotConfig& config, const Scope& scope);
  int64_t tgt_vocab() const override { return inner_.tgt_vocab(); }
  DecoderHeads decoder_heads() const override { return inner_.decoder_heads(); }
  Var loss(Graph& g, const Seq2SeqBatch& batch, float label_smoothing) const override;
  std::unique_ptr<IncrementalDecoder> start_decoding(Graph& g, const Seq2SeqBatch& batch,
                                                     int64_t max_len,
                                                     const AttentionChoice& attention,
                                                     int64_t rows_per_source) const override;

 private:
  RnnSeq2Seq inner_;
};

// Its row: registered on the first call (later calls find it).
void register_gru_dot_family();

}  // namespace heed::testing
