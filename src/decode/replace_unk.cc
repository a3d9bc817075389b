// Unknown-word replacement with the attention (see the header).
#include "heed/decode/replace_unk.h"

#include <algorithm>

#include "heed/util/error.h"

namespace heed {

std::vector<std::string> replace_unknowns(std::span<const int32_t> tokens,
                                          const std::vector<std::vector<float>>& attention,
                                          const std::vector<std::string>& src, const Vocab& vocab) {
  check(attention.size() >= tokens.size(), "replace_unknowns: ", attention.size(),
        " attention rows for ", tokens.size(), " output tokens");
  std::vector<std::string> out = vocab.decode(std::vector<int32_t>(tokens.begin(), tokens.end()));
  for (size_t t = 0; t < tokens.size(); ++t) {
    const auto& row = attention[t];
    if (tokens[t] != Vocab::kUnk || row.empty()) continue;
    // x_{argmax_j alpha_tj}; the row may be longer than src only for an empty source line
    auto j = static_cast<size_t>(std::max_element(row.begin(), row.end()) - row.begin());
    if (j < src.size()) out[t] = src[j];
  }
  return out;
}

}  // namespace heed
