// Training of an encoder-decoder (the RNN with attention or the Transformer, through
// models/seq2seq.h) from the published files of a dataset: read the corpus, split into units,
// build vocabularies on the training side, then the shared loop (train/loop.h: length-bucketed
// batches, Adam, clipping, schedule, checkpoints, resume) with validation by dev cross-entropy
// and the task metric (BLEU, or WER for CMUdict).
// Model directory: config.json, src.vocab, tgt.vocab, model.safetensors (the best weights),
// src.spm / tgt.spm (SentencePiece models, for --src-units/--tgt-units spm), and the loop's
// checkpoint/, train.jsonl and epochs/ (the last --keep-epochs weights, for `heed average`).
// Leaves out: loading a trained model (models/model_files.h), search (decode/) and the
// models' equations (models/).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heed/data/corpus.h"
#include "heed/data/segmenter.h"
#include "heed/data/vocab.h"
#include "heed/models/registry.h"
#include "heed/train/loop.h"
#include "heed/train/spec_augment.h"
#include "heed/train/wave_augment.h"

namespace heed {

// The loop's options (train/loop.h), plus what a sequence-to-sequence task needs.
struct TrainConfig : LoopOptions {
  // data, as published
  std::string train_src, train_tgt;  // train_tgt unused for tsv/cmudict (one file)
  std::string valid_src, valid_tgt;  // empty for a TSV file: its dev split (data/corpus.h)
  CorpusFormat format = CorpusFormat::Auto;
  TsvColumns tsv_columns;  // source and target columns of a TSV file
  Units src_units = Units::Word;
  // unset: word for text; a recognizer's characters (word: space-separated units, phones)
  std::optional<Units> tgt_units;
  SpmOptions spm;  // for spm units, trained on each training side
  VocabOptions src_vocab, tgt_vocab;
  int64_t max_len = 100;  // training pairs with a longer side are skipped
  // the model, one of the registered families (vocabulary sizes are filled in from the data)
  Seq2SeqConfig model = RnnSeq2SeqConfig{};
  float label_smoothing = 0.f;
  // > 0: multi-path wait-k training (Elbayad et al. 2020): each batch trains the wait-k model
  // at a k drawn uniformly from 1..wait_k_sample, so that one model decodes at any k
  int64_t wait_k_sample = 0;
  int64_t valid_max = 0;  // dev sentences decoded for the metric (0: all)
  // speech (--format audio, or a manifest or Kaldi directory detected): train_recognizer
  double max_audio_seconds = 60;  // a longer recording is refused
  bool valid_bleu = false;        // the dev set scored by BLEU, higher better (speech translation)
  std::string init_encoder;       // a trained model's directory: the front end and encoder start
                             // from its weights and normalisation (speech translation from ASR)
  int64_t mel_bins = 80;        // filterbank features per frame
  int64_t front_channels = 32;  // the convolutional front end's channels (nn/audio_front_end.h)
  bool utterance_mean = false;  // the front end subtracts each utterance's mean per bin first
  SpecAugmentOptions spec_augment;
  WaveAugmentOptions wave_augment;  // speed perturbation, additive noise
};

using TrainResult = LoopResult;

TrainResult train_seq2seq(const TrainConfig& config, std::ostream& log);
// A speech recognizer (train/speech_trainer.cc): train_src and valid_src are Kaldi data
// directories or manifests (data/speech_corpus.h); the transcripts normalised
// (data/transcript.h) and split into characters (or SentencePiece pieces, --tgt-units spm); the
// features Kaldi's filterbanks, their mean and deviation over the training set stored in the
// model's front end; validation by greedy decoding's WER on dev. train_seq2seq comes here for
// audio data.
TrainResult train_recognizer(const TrainConfig& config, std::ostream& log);

}  // namespace heed
