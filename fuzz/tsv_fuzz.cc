// Fuzz target: a TSV file of pairs (data/corpus.h read_tsv), as Tatoeba/Anki's spa.txt, read
// with the columns of a --tsv-columns spec; the input is the spec, "\n%%\n", the file. The file
// is also read as `--format auto` would (detect_format) and split into train/dev/test.
#include "heed/data/corpus.h"
#include "target.h"

HEED_FUZZ_TARGET(tsv) {
  const auto parts = heed::fuzz::split_parts(data, size, 2);
  const std::string path = heed::fuzz::write_scratch("fuzz.tsv", parts[1]);
  heed::fuzz::expect_error_or_ok([&] {
    const heed::TsvColumns columns = heed::parse_tsv_columns(std::string(parts[0]));
    const heed::Corpus all = heed::read_corpus(heed::CorpusFormat::Tsv, path, "", columns);
    heed::select_split(all, heed::Split::Test);
  });
  heed::fuzz::expect_error_or_ok([&] { heed::detect_format(path); });
}
