// Training and loading of an encoder-decoder (the RNN with attention or the Transformer, through
// models/seq2seq.h) from the published files of a dataset: read the corpus, split into units,
// build vocabularies on the training side, batch by length, train with Adam, gradient clipping
// and a reduce-on-plateau or inverse-square-root warmup schedule, validate every epoch
// (cross-entropy, perplexity and the task metric: BLEU, or WER for CMUdict), keep the best
// model, stop early, checkpoint atomically and resume exactly.
// Model directory: config.json, src.vocab, tgt.vocab, model.safetensors (the best weights),
// src.spm / tgt.spm (SentencePiece models, for --src-units/--tgt-units spm), checkpoint/ (the
// latest training state), train.jsonl (one line per validation), epochs/epoch_K.safetensors
// (the weights after epoch K, the last --keep-epochs of them, for `heed average`).
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
#include "heed/train/schedule.h"

namespace heed {

enum class ModelKind { Rnn, Transformer };
ModelKind parse_model_kind(const std::string& name);  // "rnn" | "transformer"

struct TrainConfig {
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
  // optimisation
  int64_t batch_size = 64;   // sentences per batch
  int64_t batch_tokens = 0;  // > 0: batches of at most this many padded positions instead
  int epochs = 10;
  double max_minutes = 0;  // stop after this much training time, resumptions included (0: none)
  int64_t max_steps = 0;   // stop after this many updates in total (0: no limit)
  float lr = 1e-3f;        // Adam (the peak rate with a warmup)
  float adam_beta2 = 0.999f;
  // ReduceOnPlateau (on dev cross-entropy, per epoch) or InverseSqrt (with `warmup`)
  ScheduleConfig::Kind schedule = ScheduleConfig::Kind::ReduceOnPlateau;
  int64_t warmup = 0;     // steps of linear warmup to lr
  float lr_decay = 0.5f;  // plateau: the LR is multiplied by this when dev cross-entropy stalls
  int lr_patience = 0;    // ... for more than this many epochs in a row
  float clip = 1.0f;      // global gradient-norm clipping
  float label_smoothing = 0.f;
  int patience = 3;                 // early stopping: epochs without a better dev metric
  int64_t checkpoint_every = 1000;  // steps between checkpoints (and at every epoch end)
  int64_t valid_max = 0;            // dev sentences decoded for the metric (0: all)
  int64_t valid_every = 0;          // also validate every N steps inside epochs (0: epoch ends)
  int keep_epochs = 0;  // keep the weights of the last N epochs in epochs/ (for heed average)
  uint64_t seed = 1;
  // output
  std::string save_dir;
  bool resume = false;  // continue from save_dir/checkpoint
};

struct TrainResult {
  double best_metric = 0;   // BLEU (higher is better) or WER (lower is better)
  std::string metric_name;  // "BLEU" or "WER"
  int64_t steps = 0;
  int epochs = 0;
  double minutes = 0;
};

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

}  // namespace heed
