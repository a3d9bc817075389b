// A trained model's directory read back, ready to run: its config, how its text is split into
// units and ids (segmenters, vocabularies), its weights and the model of its family
// (models/registry.h). heed translate, classify, attention and report, and the inference API
// (decode/translator.h, decode/classifier.h), load models here, without the trainer.
// Directory: config.json, src.vocab (and tgt.vocab), src.spm / tgt.spm for SentencePiece
// units, model.safetensors.
// Leaves out: writing model directories (train/), search (decode/).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/autograd/parameter.h"
#include "heed/data/segmenter.h"
#include "heed/data/vocab.h"
#include "heed/models/sentence_classifier.h"
#include "heed/models/seq2seq.h"

namespace heed {

// One side's segmenter as a model directory stores it: word or char units, or the
// SentencePiece model in `spm_file`.
Segmenter load_segmenter(Units units, const std::string& spm_file);

// An encoder-decoder's directory.
struct ModelFiles {
  nlohmann::json config;  // config.json
  std::string family;     // its "model" (models/registry.h)
  Segmenter src_seg, tgt_seg;
  bool g2p = false;      // trained on CMUdict: input/output lines are "WORD  PH PH"
  bool src_eos = false;  // sources end in </s> (config.json's "src_eos": Marian's models)
  bool audio = false;    // a speech recognizer (config.json's src_units "audio"): no source
                         // segmenter or vocabulary; it reads frames (decode/recognizer.h)
  Vocab src_vocab, tgt_vocab;
  ParameterStore params;
  std::unique_ptr<Seq2SeqModel> model;
};
// Decoding choices that override a model's config.json as it is loaded (heed translate's
// --wait-k, --hard-marginal); each is an Error for a model it does not apply to.
struct DecodeOverrides {
  int64_t wait_k = 0;  // > 0: a wait-k model (trained with --wait-k) decodes at this k instead
                       // of its own (one trained with --wait-k-sample serves any k)
  bool hard_marginal = false;  // hard attention trained exactly: decode with the marginal over
                               // positions it was trained on, not the argmax position
  float ctc_weight = -1.f;     // >= 0: joint CTC-attention decoding at this weight instead of
                               // the one trained with (a model trained with --ctc-weight)
  int64_t ctc_lookahead = -1;  // >= 0: joint CTC-MoChA, CTC reading this many positions past
                               // each step's stop (models/joint_ctc_decoder.h); streams
};
std::unique_ptr<ModelFiles> load_model(const std::string& dir, const DecodeOverrides& o = {});

// The models of an ensemble (models/ensemble.h), or one model: each directory loaded, and each
// after the first checked to read and write text exactly as the first does (units, SentencePiece
// models, vocabularies, G2P format); fails naming both directories and what differs.
std::vector<std::unique_ptr<ModelFiles>> load_models(const std::vector<std::string>& dirs,
                                                     const DecodeOverrides& o = {});

// The text a model reads from an input line: for a G2P model given a CMUdict entry
// ("WORD  PH PH"), the word; otherwise the line itself.
std::string model_input(const ModelFiles& m, const std::string& line);

// A classifier's directory (config.json with "units", src.vocab, model.safetensors).
struct ClassifierFiles {
  nlohmann::json config;
  Segmenter seg;
  Vocab vocab;
  ParameterStore params;
  std::unique_ptr<SentenceClassifier> model;
};
std::unique_ptr<ClassifierFiles> load_classifier(const std::string& dir);
// A classifier splits words or characters (no SentencePiece); an Error otherwise.
Segmenter classifier_segmenter(Units u);

}  // namespace heed
