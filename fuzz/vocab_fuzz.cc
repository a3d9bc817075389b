// Fuzz target: a vocabulary file (data/vocab.h), src.vocab / tgt.vocab of a model directory.
#include "heed/data/vocab.h"
#include "target.h"

HEED_FUZZ_TARGET(vocab) {
  const std::string path =
      heed::fuzz::write_scratch("fuzz.vocab", {reinterpret_cast<const char*>(data), size});
  heed::fuzz::expect_error_or_ok([&] {
    const heed::Vocab v = heed::Vocab::load(path);
    // what a loaded vocabulary is used for: encoding and decoding every token
    std::vector<int32_t> ids;
    for (int32_t i = 0; i < v.size(); ++i) ids.push_back(v.id(v.token(i)));
    v.decode(ids);
  });
}
