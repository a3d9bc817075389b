// Fuzz target: a CMUdict file (data/corpus.h read_cmudict), "WORD  PH PH" lines, and the
// grouping of a word's pronunciations into alternative references.
#include "heed/data/corpus.h"
#include "target.h"

HEED_FUZZ_TARGET(cmudict) {
  const std::string path =
      heed::fuzz::write_scratch("fuzz.dict", {reinterpret_cast<const char*>(data), size});
  heed::fuzz::expect_error_or_ok(
      [&] { heed::group_alternatives(heed::read_corpus(heed::CorpusFormat::Cmudict, path, "")); });
}
