// Fuzz target: labelled sentences (data/labeled.h read_labeled), the SST files' "<label>
// <sentence>" lines; the first byte chooses the class limit (0: none, as a training file; 2..5:
// as a dev/test file read against a training file's classes).
#include "heed/data/labeled.h"
#include "target.h"

HEED_FUZZ_TARGET(labeled) {
  if (size == 0) return;
  const int32_t max_classes = data[0] % 5 == 0 ? 0 : 1 + data[0] % 5;
  const std::string path = heed::fuzz::write_scratch(
      "fuzz.labeled", {reinterpret_cast<const char*>(data) + 1, size - 1});
  heed::fuzz::expect_error_or_ok([&] { heed::read_labeled(path, max_classes); });
}
