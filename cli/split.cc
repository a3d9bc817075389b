// `heed split`: one part of a TSV file's documented split (data/corpus.h: every sentence in one
// part), one side per line: the test sources for `heed translate`, the references for
// `heed score`.
// Leaves out: the split rule itself (data/corpus.h), which heed train applies too.
#include <iostream>

#include "commands.h"
#include "heed/data/corpus.h"
#include "heed/util/error.h"

namespace heed::cli {

std::span<const Named<Side>> names(Side) {
  static constexpr Named<Side> kNames[] = {{Side::Src, "src"}, {Side::Tgt, "tgt"}};
  return kNames;
}

void SplitCommand::add(CLI::App& parent) {
  app = parent.add_subcommand(
      "split",
      "Print one part of a TSV file's split, the one heed train uses when it is given no dev "
      "file: pairs sharing a sentence (either side) are one group, and group k (numbered in "
      "order of first line) is test when k % 50 == 0, dev when k % 50 == 25, else train; so no "
      "sentence is in two parts, whichever column is the source");
  app->add_option("file", file, "The TSV file (e.g. anki-spa-eng/spa.txt)")->required();
  add_enum_option(*app, "--part", part, "The part printed");
  add_enum_option(*app, "--side", side, "Which of the two columns to print");
  app->add_option("--tsv-columns", tsv_columns,
                  "Source and target columns, 1-based, as given to heed train")
      ->capture_default_str();
}

int SplitCommand::run() const {
  TsvColumns columns = parse_tsv_columns(tsv_columns);
  Corpus part_pairs = select_split(read_tsv(file, columns.src, columns.tgt), part);
  for (const SentencePair& p : part_pairs.pairs)
    std::cout << (side == Side::Src ? p.src : p.tgt) << "\n";
  return 0;
}

}  // namespace heed::cli
