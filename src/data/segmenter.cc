// Segmenter: words, characters, SentencePiece pieces (see the header).
// Leaves out: SentencePiece's sampling (subword regularisation) and n-best segmentations.
#include "heed/data/segmenter.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <unordered_map>

#include "heed/data/text.h"
#include "heed/util/error.h"

namespace heed {

std::span<const Named<Units>> names(Units) {
  static constexpr Named<Units> kNames[] = {
      {Units::Word, "word"}, {Units::Char, "char"}, {Units::Spm, "spm"}};
  return kNames;
}

std::span<const Named<SpmType>> names(SpmType) {
  static constexpr Named<SpmType> kNames[] = {{SpmType::Unigram, "unigram"}, {SpmType::Bpe, "bpe"}};
  return kNames;
}

Units parse_units(const std::string& name) {
  return parse_name<Units>(name, "units");
}

const char* units_name(Units u) {
  return name_of(u);
}

Segmenter::Segmenter(Units u) : units_(u) {
  check(u != Units::Spm, "a SentencePiece segmenter needs its model (Segmenter::from_spm)");
}

namespace {

// The training lines, handed to the trainer without a temporary file.
class Lines : public sentencepiece::SentenceIterator {
 public:
  explicit Lines(const std::vector<std::string>& lines) : lines_(lines) {}
  bool done() const override { return i_ >= lines_.size(); }
  void Next() override { ++i_; }
  const std::string& value() const override { return lines_[i_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>& lines_;
  size_t i_ = 0;
};

}  // namespace

std::string Segmenter::train_spm(const std::vector<std::string>& lines, const SpmOptions& o) {
  check(!lines.empty(), "SentencePiece: no training lines");
  check(o.vocab_size >= 8, "SentencePiece vocabulary size ", o.vocab_size, " (at least 8)");
  // heed's Vocab adds its own <pad> <s> </s> <unk>: SentencePiece keeps only its <unk>.
  const std::unordered_map<std::string, std::string> args = {
      {"vocab_size", std::to_string(o.vocab_size)},
      {"model_type", name_of(o.model_type)},
      {"character_coverage", std::to_string(o.character_coverage)},
      {"hard_vocab_limit", "false"},
      {"bos_id", "-1"},
      {"eos_id", "-1"},
      {"minloglevel", "2"},
      {"num_threads", "1"}};
  Lines it(lines);
  std::string proto;
  auto status = sentencepiece::SentencePieceTrainer::Train(args, &it, &proto);
  check(status.ok(), "SentencePiece training failed: ", status.ToString());
  return proto;
}

Segmenter Segmenter::from_spm(const std::string& serialized, const std::string& origin) {
  auto sp = std::make_shared<sentencepiece::SentencePieceProcessor>();
  auto status = sp->LoadFromSerializedProto(serialized);
  check(status.ok(), origin, ": not a SentencePiece model (", status.ToString(), ")");
  Segmenter s;
  s.units_ = Units::Spm;
  s.spm_ = std::move(sp);
  return s;
}

std::vector<std::string> Segmenter::split(std::string_view line) const {
  switch (units_) {
    case Units::Word:
      return split_words(line);
    case Units::Char:
      return split_chars(line);
    case Units::Spm:
      break;
  }
  std::vector<std::string> pieces;
  auto status = spm_->Encode(line, &pieces);
  check(status.ok(), "SentencePiece: ", status.ToString());
  return pieces;
}

bool Segmenter::operator==(const Segmenter& o) const {
  if (units_ != o.units_ || (spm_ == nullptr) != (o.spm_ == nullptr)) return false;
  return spm_ == nullptr || spm_->serialized_model_proto() == o.spm_->serialized_model_proto();
}

std::string Segmenter::join(const std::vector<std::string>& units) const {
  switch (units_) {
    case Units::Word:
      return join_words(units);
    case Units::Char:
      return join_chars(units);
    case Units::Spm:
      break;
  }
  std::string text;
  auto status = spm_->Decode(units, &text);
  check(status.ok(), "SentencePiece: ", status.ToString());
  return text;
}

}  // namespace heed
