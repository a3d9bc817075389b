// Fuzz target: a pickle (io/pickle.h), what a PyTorch checkpoint's data.pkl holds.
#include "heed/io/pickle.h"
#include "target.h"

HEED_FUZZ_TARGET(pickle) {
  heed::fuzz::expect_error_or_ok([&] {
    heed::pickle::load(std::string(reinterpret_cast<const char*>(data), size), "fuzz.pkl");
  });
}
