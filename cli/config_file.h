// --config FILE.toml and --dump-config: what CLI11's config reading and writing leave to heed.
// CLI11 (main.cc) reads the file's [train], [translate], ... sections into the subcommands'
// flags; heed turns its errors into "FILE:LINE: problem" and its dotted dump into sections.
// Leaves out: parsing TOML (CLI11 does).
#pragma once

#include <string>
#include <vector>

namespace heed::cli {

// CLI11's dump ("threads=1", "train.lr=5e-3", ...) as top-level lines followed by one
// [section] per subcommand ("lr = 5e-3"): the form the help and recipes/ use.
std::string config_sections(const std::string& flat);

// For CLI11's "INI was not able to parse ITEM" (a misspelt key, an unknown section, a line
// outside any section, a broken header), "FILE:LINE: what is wrong" over the given --config
// files; empty for any other message.
std::string config_error(const std::vector<std::string>& files, const std::string& cli11_message);

}  // namespace heed::cli
