// `heed import`: another toolkit's Transformer checkpoint as a heed model directory, which heed
// translate, attention, report and serve then use as their own.
// Leaves out: the formats themselves (models/checkpoint_import.h).
#include <iostream>

#include "commands.h"
#include "heed/models/checkpoint_import.h"
#include "heed/util/error.h"

namespace heed::cli {

std::span<const Named<ImportFormat>> names(ImportFormat) {
  static constexpr Named<ImportFormat> kNames[] = {{ImportFormat::OpennmtPy, "opennmt-py"},
                                                   {ImportFormat::Marian, "marian"}};
  return kNames;
}

void ImportCommand::add(CLI::App& parent) {
  app = parent.add_subcommand("import",
                              "Make a heed model directory of another toolkit's Transformer");
  add_enum_option(*app, "--format", format,
                  "opennmt-py: an OpenNMT-py 3 checkpoint (.pt, as onmt_train saves it; read "
                  "without PyTorch): its pre-norm Transformer, vocabularies and options; marian: "
                  "a Marian Transformer (model.npz) with its --vocab .yml files");
  app->add_option("--model", checkpoint, "The checkpoint file")->required();
  app->add_option("--vocab", vocabs,
                  "marian: its vocabulary (.yml, \"token: id\" lines): one for both sides, or "
                  "the source's then the target's");
  app->add_option("--out", out_dir, "The heed model directory to write (new, or without a model)")
      ->required();
}

int ImportCommand::run() const {
  check(format == ImportFormat::Marian || vocabs.empty(),
        "import: --vocab is for --format marian (OpenNMT-py keeps its vocabularies in the "
        "checkpoint)");
  check(format != ImportFormat::Marian || !vocabs.empty(),
        "import: --format marian needs --vocab (Marian keeps its vocabularies beside the model)");
  const std::vector<std::string> files = format == ImportFormat::Marian
                                             ? import_marian(checkpoint, vocabs, out_dir)
                                             : import_opennmt_py(checkpoint, out_dir);
  std::cerr << "heed import: wrote";
  for (const std::string& f : files) std::cerr << " " << f;
  std::cerr << " in " << out_dir << "\n";
  return 0;
}

}  // namespace heed::cli
