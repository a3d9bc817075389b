// Fuzz target: a model directory (models/model_files.h) read and run as heed translate and
// heed classify do: config.json, src.vocab, tgt.vocab and model.safetensors, separated by
// "\n%%\n" in the input (a missing part is a missing file). A model that loads translates (or
// classifies) two short sentences.
#include <filesystem>

#include "heed/decode/classifier.h"
#include "heed/decode/translator.h"
#include "target.h"

HEED_FUZZ_TARGET(model_dir) {
  namespace fs = std::filesystem;
  const auto parts = heed::fuzz::split_parts(data, size, 4);
  const fs::path dir = heed::fuzz::scratch_dir() / "model";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const char* files[] = {"config.json", "src.vocab", "tgt.vocab", "model.safetensors"};
  for (size_t i = 0; i < 4; ++i)
    if (!parts[i].empty()) heed::fuzz::write_scratch("model/" + std::string(files[i]), parts[i]);
  const std::vector<std::string> inputs = {"a b c", "the 3 ..."};
  heed::fuzz::expect_error_or_ok([&] {
    heed::Translator translator({dir.string()}, {.threads = 1});
    heed::TranslationOptions options{
        .beam_size = 2, .max_decoding_length = 8, .return_attention = true};
    translator.translate(inputs, options);
  });
  heed::fuzz::expect_error_or_ok([&] {
    heed::Classifier classifier(dir.string());
    classifier.classify(inputs);
  });
}
