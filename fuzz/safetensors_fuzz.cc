// Fuzz target: a safetensors file (io/safetensors.h), the format of model.safetensors and of
// checkpoints.
#include "heed/io/safetensors.h"
#include "target.h"

HEED_FUZZ_TARGET(safetensors) {
  heed::fuzz::expect_error_or_ok([&] {
    heed::decode_safetensors(std::string(reinterpret_cast<const char*>(data), size),
                             "fuzz.safetensors");
  });
}
