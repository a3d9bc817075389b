// Training and loading of an encoder-decoder (the RNN with attention or the Transformer, through
// models/seq2seq.h) from the published files of a dataset: read the corpus, split into units,
// build vocabularies on the training side, then the shared loop (train/loop.h: length-bucketed
// batches, Adam, clipping, schedule, checkpoints, resume) with validation by dev cross-entropy
// and the task metric (BLEU, or WER for CMUdict).
// Model directory: config.json, src.vocab, tgt.vocab, model.safetensors (the best weights),
// src.spm / tgt.spm (SentencePiece models, for --src-units/--tgt-units spm), and the loop's
// checkpoint/, train.jsonl and epochs/ (the last --keep-epochs weights, for `heed average`).
// Leaves out: search (decode/) and the models' equations (models/).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "heed/data/corpus.h"
#include "heed/data/segmenter.h"
#include "heed/data/vocab.h"
#include "heed/models/rnn_seq2seq.h"
#include "heed/models/transformer_seq2seq.h"
#include "heed/train/loop.h"

namespace heed {

enum class ModelKind { Rnn, Transformer };
ModelKind parse_model_kind(const std::string& name);  // "rnn" | "transformer"

// The loop's options (train/loop.h), plus what a sequence-to-sequence task needs.
struct TrainConfig : LoopOptions {
  // data, as published
  std::string train_src, train_tgt;  // train_tgt unused for tsv/cmudict (one file)
  std::string valid_src, valid_tgt;  // empty for a TSV file: its dev split (data/corpus.h)
  CorpusFormat format = CorpusFormat::Auto;
  TsvColumns tsv_columns;  // source and target columns of a TSV file
  Units src_units = Units::Word, tgt_units = Units::Word;
  SpmOptions spm;  // for spm units, trained on each training side
  VocabOptions src_vocab, tgt_vocab;
  int64_t max_len = 100;  // training pairs with a longer side are skipped
  // model (vocabulary sizes are filled in from the data)
  ModelKind kind = ModelKind::Rnn;
  RnnSeq2SeqConfig rnn;                  // --model rnn
  TransformerSeq2SeqConfig transformer;  // --model transformer
  float label_smoothing = 0.f;
  int64_t valid_max = 0;  // dev sentences decoded for the metric (0: all)
};

using TrainResult = LoopResult;

TrainResult train_seq2seq(const TrainConfig& config, std::ostream& log);

// A model from its config.json object ({"model": "rnn" | "transformer", ...}), with fresh
// parameters in `scope`.
std::unique_ptr<Seq2SeqModel> make_seq2seq_model(const nlohmann::json& config, const Scope& scope);

// A trained model loaded from its directory, ready to translate.
struct ModelFiles {
  nlohmann::json config;  // config.json
  Segmenter src_seg, tgt_seg;
  bool g2p = false;  // trained on CMUdict: input/output lines are "WORD  PH PH"
  Vocab src_vocab, tgt_vocab;
  ParameterStore params;
  std::unique_ptr<Seq2SeqModel> model;
};
std::unique_ptr<ModelFiles> load_model(const std::string& dir);

// The models of an ensemble (models/ensemble.h), or one model: each directory loaded, and each
// after the first checked to read and write text exactly as the first does (units, SentencePiece
// models, vocabularies, G2P format); fails naming both directories and what differs.
std::vector<std::unique_ptr<ModelFiles>> load_models(const std::vector<std::string>& dirs);
// Those models as the plain pointers viz::align and viz::decoder_heads take, in their order.
std::vector<const ModelFiles*> member_files(const std::vector<std::unique_ptr<ModelFiles>>& models);

// The text a model reads from an input line: for a G2P model given a CMUdict entry
// ("WORD  PH PH"), the word; otherwise the line itself.
std::string model_input(const ModelFiles& m, const std::string& line);

}  // namespace heed
