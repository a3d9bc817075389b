// Fuzz target: a speech manifest ("path<TAB>transcript") and a Kaldi data directory (wav.scp,
// text, segments) as data/speech_corpus.h reads them; the input is the manifest, "\n%%\n",
// wav.scp, "\n%%\n", text, "\n%%\n", segments (an empty part: no segments file).
#include <filesystem>

#include "heed/data/corpus.h"
#include "heed/data/speech_corpus.h"
#include "heed/data/transcript.h"
#include "target.h"

HEED_FUZZ_TARGET(speech_corpus) {
  const auto parts = heed::fuzz::split_parts(data, size, 4);
  const std::string manifest = heed::fuzz::write_scratch("fuzz.tsv", parts[0]);
  heed::fuzz::expect_error_or_ok([&] {
    for (const heed::Utterance& u : heed::read_manifest(manifest).utterances)
      heed::normalise_transcript(u.text);
  });
  heed::fuzz::expect_error_or_ok([&] { heed::detect_format(manifest); });
  const std::filesystem::path dir = heed::fuzz::scratch_dir() / "kaldi";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  heed::fuzz::write_scratch("kaldi/wav.scp", parts[1]);
  heed::fuzz::write_scratch("kaldi/text", parts[2]);
  if (!parts[3].empty()) heed::fuzz::write_scratch("kaldi/segments", parts[3]);
  heed::fuzz::expect_error_or_ok([&] { heed::read_kaldi_dir(dir.string()); });
}
