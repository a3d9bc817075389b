// Fuzz target: an ARPA n-gram file (models/ngram_lm.h), heed translate --lm.
#include "heed/models/ngram_lm.h"
#include "target.h"

HEED_FUZZ_TARGET(arpa) {
  const std::string path =
      heed::fuzz::write_scratch("fuzz.arpa", {reinterpret_cast<const char*>(data), size});
  heed::fuzz::expect_error_or_ok([&] {
    const heed::NgramLm lm = heed::NgramLm::read_arpa(path);
    // what the prefix search asks of it: every word after every short context, backing off
    std::vector<int32_t> context;
    for (int32_t w = 0; w < static_cast<int32_t>(lm.words().size()) && w < 64; ++w) {
      lm.log10_prob(context, w);
      context.push_back(w);
      if (static_cast<int>(context.size()) >= lm.order()) context.erase(context.begin());
    }
    lm.arpa();
  });
}
