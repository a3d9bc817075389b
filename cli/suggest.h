// Did-you-mean for a command line CLI11 refused: the subcommand, or the long option of the
// subcommand given, nearest a word it does not know (`heed trian`, `translate --beam-size 5`),
// as git and cargo answer a typo.
// Leaves out: parsing (CLI11 does; this reads the words again only to name the nearest), the
// nearness of names (util/nearest.h).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace heed::cli {

// For args (argv without the program) that `app` refused: "unknown subcommand 'trian'; did you
// mean 'train'?" (or the list of subcommands when none is near), or "unknown option --beam-size
// of translate; did you mean --beam?"; empty when every word is known or no option is near.
// `replaces`: the text says all (a subcommand CLI11 only calls missing); else it goes before
// CLI11's own message.
struct Suggestion {
  std::string text;
  bool replaces = false;
};
Suggestion did_you_mean(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace heed::cli
