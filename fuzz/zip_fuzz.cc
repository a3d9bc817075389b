// Fuzz target: a ZIP archive (io/zip.h), as torch.save and numpy.savez write them.
#include "heed/io/zip.h"
#include "target.h"

HEED_FUZZ_TARGET(zip) {
  heed::fuzz::expect_error_or_ok([&] {
    heed::decode_zip(std::string(reinterpret_cast<const char*>(data), size), "fuzz.zip");
  });
}
