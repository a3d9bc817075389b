// Fuzz target: a model directory's train.jsonl as heed report reads it (viz/training_log.h).
#include <sstream>

#include "heed/viz/training_log.h"
#include "target.h"

HEED_FUZZ_TARGET(training_log) {
  const std::string path =
      heed::fuzz::write_scratch("train.jsonl", {reinterpret_cast<const char*>(data), size});
  std::ostringstream warnings;
  heed::fuzz::expect_error_or_ok([&] { heed::viz::read_training_log(path, warnings); });
}
