// Fuzz target: one .npy array (io/npy.h), as Marian's .npz models hold them.
#include "heed/io/npy.h"
#include "target.h"

HEED_FUZZ_TARGET(npy) {
  heed::fuzz::expect_error_or_ok([&] {
    heed::decode_npy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  });
}
