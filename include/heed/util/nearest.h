// The name a misspelt word meant: for did-you-mean in the command line (cli/suggest.h) and in
// heed serve's refusals of unknown request keys (serve/request.h).
// Leaves out: where the names come from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heed {

// Edits between two words: insertions, deletions, substitutions and swaps of two neighbours
// (the optimal-string-alignment distance: "trian" is one edit from "train").
int64_t spelling_distance(const std::string& a, const std::string& b);

// The nearest of `names` to `word`: at most max(1, (|word| + 2) / 3) edits away, the first of the
// nearest on a tie; else a name that is the word with a separated part more or less (beam-size
// or beam_size: beam); else empty.
std::string nearest_name(const std::string& word, const std::vector<std::string>& names);

}  // namespace heed
