// `heed split`: one part of a TSV file's documented split (line % 50 == 0 test, == 25 dev, else
// train), one side per line: the test sources for `heed translate`, the references for
// `heed score`.
// Leaves out: the split rule itself (data/corpus.h), which heed train applies too.
#include <iostream>

#include "commands.h"
#include "heed/data/corpus.h"
#include "heed/util/error.h"

namespace heed::cli {

void SplitCommand::add(CLI::App& parent) {
  app = parent.add_subcommand(
      "split",
      "Print one part of a TSV file's split by line number (line % 50 == 0: test, == 25: dev, "
      "else train), the split heed train uses when it is given no dev file");
  app->add_option("file", file, "The TSV file (e.g. anki-spa-eng/spa.txt)")->required();
  app->add_option("--part", part, "train | dev | test")
      ->check(CLI::IsMember({"train", "dev", "test"}))
      ->capture_default_str();
  app->add_option("--side", side, "src | tgt: which of the two columns to print")
      ->check(CLI::IsMember({"src", "tgt"}))
      ->capture_default_str();
  app->add_option("--tsv-columns", tsv_columns,
                  "Source and target columns, 1-based, as given to heed train")
      ->capture_default_str();
}

int SplitCommand::run() const {
  TsvColumns columns = parse_tsv_columns(tsv_columns);
  Corpus part_pairs = select_split(read_tsv(file, columns.src, columns.tgt), parse_split(part));
  for (const SentencePair& p : part_pairs.pairs)
    std::cout << (side == "src" ? p.src : p.tgt) << "\n";
  return 0;
}

}  // namespace heed::cli
