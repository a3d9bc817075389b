// `heed export`: a trained model written in another toolkit's format, so that it runs there.
// Leaves out: the formats themselves (models/ctranslate2_export.h).
#include <iostream>

#include "commands.h"
#include "heed/models/ctranslate2_export.h"

namespace heed::cli {

std::span<const Named<ExportFormat>> names(ExportFormat) {
  static constexpr Named<ExportFormat> kNames[] = {{ExportFormat::CTranslate2, "ctranslate2"}};
  return kNames;
}

void ExportCommand::add(CLI::App& parent) {
  app = parent.add_subcommand("export", "Write a trained model in another toolkit's format");
  add_enum_option(*app, "--format", format,
                  "ctranslate2: a Transformer as CTranslate2's model directory (model.bin as its "
                  "TransformerSpec, config.json, vocabularies), for ctranslate2.Translator; give "
                  "it the model's units (words, characters or SentencePiece pieces) as tokens");
  app->add_option("--model", model_dir, "The heed model directory")->required();
  app->add_option("--out", out_dir, "The directory to write (new, or without a model)")->required();
}

int ExportCommand::run() const {
  const std::vector<std::string> files = export_ctranslate2(model_dir, out_dir);
  std::cerr << "heed export: wrote";
  for (const std::string& f : files) std::cerr << " " << f;
  std::cerr << " in " << out_dir << "\n";
  return 0;
}

}  // namespace heed::cli
