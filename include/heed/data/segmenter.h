// Segmenter: how a line of text becomes the units a model reads or writes, and back.
//   word: whitespace-separated words (Multi30k tok/ comes Moses-tokenised and lowercased);
//   char: Unicode code points, a space as '▁' (G2P letters, character models);
//   spm:  SentencePiece subwords (Kudo & Richardson 2018), a unigram or BPE model that heed
//         trains on the training side only and stores in the model directory.
// Leaves out: vocabularies (data/vocab.h map units to ids).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "heed/util/names.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace heed {

enum class Units { Word, Char, Spm };
std::span<const Named<Units>> names(Units);  // "word" | "char" | "spm"
Units parse_units(const std::string& name);  // an Error lists the names
const char* units_name(Units u);

// SentencePiece's two models: the unigram language model (Kudo 2018) and BPE.
enum class SpmType { Unigram, Bpe };
std::span<const Named<SpmType>> names(SpmType);  // "unigram" | "bpe"

struct SpmOptions {
  int vocab_size = 8000;  // a soft limit: a small corpus gets fewer pieces, not an error
  SpmType model_type = SpmType::Unigram;
  double character_coverage = 1.0;  // keep every character of the training side
};

class Segmenter {
 public:
  explicit Segmenter(Units u = Units::Word);
  // Trains a SentencePiece model on `lines` (the training side) and returns its serialized
  // form, to be written next to the model and given to from_spm().
  static std::string train_spm(const std::vector<std::string>& lines, const SpmOptions& o);
  // A SentencePiece segmenter from a serialized model; `origin` names it in errors.
  static Segmenter from_spm(const std::string& serialized, const std::string& origin);

  Units units() const { return units_; }
  std::vector<std::string> split(std::string_view line) const;
  std::string join(const std::vector<std::string>& units) const;
  // The same units and, for spm, the same SentencePiece model.
  bool operator==(const Segmenter& o) const;

 private:
  Units units_;
  std::shared_ptr<const sentencepiece::SentencePieceProcessor> spm_;  // Units::Spm only
};

}  // namespace heed
