// Names nearest a misspelt word (see the header).
#include "heed/util/nearest.h"

#include <algorithm>
#include <initializer_list>

namespace heed {

int64_t spelling_distance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int64_t>> d(n + 1, std::vector<int64_t>(m + 1));  // [n + 1, m + 1]
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int64_t>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int64_t>(j);
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string nearest_name(const std::string& word, const std::vector<std::string>& names) {
  const int64_t limit = std::max<int64_t>(1, static_cast<int64_t>(word.size() + 2) / 3);
  std::string best;
  int64_t best_d = limit + 1;
  for (const std::string& n : names) {
    const int64_t d = spelling_distance(word, n);
    if (d < best_d) {
      best = n;
      best_d = d;
    }
  }
  if (!best.empty()) return best;
  for (const std::string& n : names)  // a part too many or too few: beam-size, beam_size, beam
    for (const char* sep : {"-", "_"})
      if (word.starts_with(n + sep) || n.starts_with(word + sep)) return n;
  return "";
}

}  // namespace heed
