// Unknown-word replacement with the attention (Jean et al. 2015, "On Using Very Large Target
// Vocabulary for NMT", §3.2; Luong et al. 2015, "Addressing the Rare Word Problem in NMT"):
// each <unk> in the output becomes the source unit its attention row weighs most, i.e.
//   y_t = <unk>  ->  y_t = x_{argmax_j alpha_tj}.
// Word-level models only (copying a source word is right for names and numbers, the bulk of
// Multi30k's unknowns); no translation dictionary.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "heed/data/vocab.h"

namespace heed {

// tokens: the output ids (no EOS); attention: one row over the source per output token (an
// extra EOS row is allowed); src: the source units. Returns the output units.
std::vector<std::string> replace_unknowns(std::span<const int32_t> tokens,
                                          const std::vector<std::vector<float>>& attention,
                                          const std::vector<std::string>& src, const Vocab& vocab);

}  // namespace heed
