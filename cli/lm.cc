// `heed lm`: estimate an n-gram model of output units (train/kneser_ney.h) and write it as an
// ARPA file, for the prefix search of ctc models (heed translate --lm). From CMUdict it reads
// the pronunciations (Rao et al. 2015's 5-gram of phones), from any other file every line.
// Leaves out: the estimation (train/kneser_ney.cc), the format (models/ngram_lm.cc).
#include <iostream>
#include <utility>
#include <vector>

#include "commands.h"
#include "heed/data/corpus.h"
#include "heed/data/speech_corpus.h"
#include "heed/data/text.h"
#include "heed/data/transcript.h"
#include "heed/train/kneser_ney.h"
#include "heed/util/error.h"

namespace heed::cli {

void LmCommand::add(CLI::App& parent) {
  app = parent.add_subcommand(
      "lm",
      "Estimate a modified Kneser-Ney n-gram model of output units as an ARPA file (for "
      "heed translate --lm with ctc models)");
  app->add_option("--train", train,
                  "Training text: a CMUdict file (its pronunciations are the sentences) or one "
                  "sentence per line (use the training targets only)")
      ->required()
      ->check(CLI::ExistingPath);
  // the formats lm reads, by their names here ("text": one sentence per line); one table for
  // the choices --help lists and for what each name sets
  static const std::vector<std::pair<std::string, CorpusFormat>> kFormats = {
      {"auto", CorpusFormat::Auto},
      {"cmudict", CorpusFormat::Cmudict},
      {"text", CorpusFormat::Parallel},
      {"audio", CorpusFormat::Audio}};
  std::vector<std::string> format_names;
  format_names.reserve(kFormats.size());
  for (const auto& [name, f] : kFormats) format_names.push_back(name);
  app->add_option_function<std::string>(
         "--format",
         [this](const std::string& name) {
           for (const auto& [n, f] : kFormats)
             if (n == name) format = f;
         },
         "auto (by the file's first line) | cmudict (its pronunciations are the sentences) | "
         "text (one sentence per line) | audio (a speech manifest or Kaldi data directory: its "
         "normalised transcripts)")
      ->transform(lowercase, "")
      ->check(CLI::IsMember(format_names))
      ->default_str("auto");
  app->add_option_function<std::string>(
         "--units", [this](const std::string& name) { units = parse_name<Units>(name, "--units"); },
         "Units of a sentence: word (split at spaces; CMUdict phones) or char")
      ->transform(lowercase, "")
      ->check(CLI::IsMember(std::vector<std::string>{"word", "char"}))
      ->default_str(name_of(units));
  app->add_option("--order", order, "n, the longest n-gram")
      ->capture_default_str()
      ->check(CLI::Range(1, 16));
  app->add_option("--out", out, "The ARPA file to write (replaced atomically)")->required();
}

int LmCommand::run() const {
  const CorpusFormat f = format == CorpusFormat::Auto ? detect_format(train) : format;
  std::vector<std::vector<std::string>> sentences;
  auto add = [&](const std::string& s) {
    sentences.push_back(units == Units::Char ? split_chars(s) : split_words(s));
  };
  if (f == CorpusFormat::Audio) {  // a speech corpus: its transcripts as a recognizer reads them
    check(units == Units::Char,
          "lm: a speech corpus' transcripts are modelled in characters "
          "(--units char), the units of a recognizer");
    for (const Utterance& u : read_speech_corpus(train).utterances)
      add(normalise_transcript(u.text));
  } else if (f == CorpusFormat::Cmudict) {
    for (const SentencePair& p : read_corpus(f, train, "", {}).pairs) add(p.tgt);
  } else {
    for (const std::string& line : read_lines(train)) add(line);
  }
  const NgramLm lm = estimate_kneser_ney(sentences, order);
  lm.write_arpa(out);
  std::cout << "heed lm: " << sentences.size() << " sentences, " << lm.words().size() << " words; "
            << order << "-gram model (";
  for (int n = 1; n <= order; ++n) std::cout << (n > 1 ? ", " : "") << lm.count(n);
  std::cout << " n-grams) in " << out << "\n";
  return 0;
}

}  // namespace heed::cli
