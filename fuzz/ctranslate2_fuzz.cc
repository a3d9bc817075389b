// Fuzz target: CTranslate2's model.bin (io/ctranslate2.h).
#include "heed/io/ctranslate2.h"
#include "target.h"

HEED_FUZZ_TARGET(ctranslate2) {
  heed::fuzz::expect_error_or_ok([&] {
    heed::ct2::decode_model_bin(std::string(reinterpret_cast<const char*>(data), size),
                                "fuzz.model.bin");
  });
}
