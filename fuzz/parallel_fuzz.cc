// Fuzz target: two line-parallel text files (data/corpus.h read_parallel), as Multi30k's;
// the input is the source file, "\n%%\n", the target file.
#include "heed/data/corpus.h"
#include "target.h"

HEED_FUZZ_TARGET(parallel) {
  const auto parts = heed::fuzz::split_parts(data, size, 2);
  const std::string src = heed::fuzz::write_scratch("fuzz.src", parts[0]);
  const std::string tgt = heed::fuzz::write_scratch("fuzz.tgt", parts[1]);
  heed::fuzz::expect_error_or_ok(
      [&] { heed::read_corpus(heed::CorpusFormat::Parallel, src, tgt, {}); });
}
