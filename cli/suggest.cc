// Did-you-mean (see the header).
#include "suggest.h"

#include <algorithm>
#include <cstdint>

namespace heed::cli {

namespace {

// Edits between two words: insertions, deletions, substitutions and swaps of two neighbours
// (the optimal-string-alignment distance: "trian" is one edit from "train").
int64_t distance(const std::string& a, const std::string& b) {
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

// The long names (without dashes) of an app's options.
std::vector<std::string> long_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* o : app.get_options())
    for (const std::string& n : o->get_lnames()) out.push_back(n);
  return out;
}

// Whether the app's option --name takes a value (the next word, unless given as --name=value).
bool takes_value(const CLI::App& app, const std::string& name) {
  for (const CLI::Option* o : app.get_options())
    for (const std::string& n : o->get_lnames())
      if (n == name) return o->get_type_size_max() > 0;
  return false;
}

}  // namespace

std::string nearest_name(const std::string& word, const std::vector<std::string>& names) {
  const int64_t limit = std::max<int64_t>(1, static_cast<int64_t>(word.size() + 2) / 3);
  std::string best;
  int64_t best_d = limit + 1;
  for (const std::string& n : names) {
    const int64_t d = distance(word, n);
    if (d < best_d) {
      best = n;
      best_d = d;
    }
  }
  if (!best.empty()) return best;
  for (const std::string& n : names)  // a word with a part too many or too few: beam-size, beam
    if (word.starts_with(n + "-") || n.starts_with(word + "-")) return n;
  return "";
}

Suggestion did_you_mean(const CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> commands;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; }))
    commands.push_back(s->get_name());
  // the subcommand: the first word that is not an option of heed's own or its value
  size_t i = 0;
  const CLI::App* sub = nullptr;
  for (; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (w.rfind("--", 0) == 0) {
      if (w.find('=') == std::string::npos && takes_value(app, w.substr(2))) ++i;
      continue;
    }
    if (std::find(commands.begin(), commands.end(), w) == commands.end()) {
      const std::string near = nearest_name(w, commands);
      std::string text = "unknown subcommand '" + w + "'";
      if (!near.empty()) return {text.append("; did you mean '").append(near).append("'?"), true};
      text += " (heed's subcommands: ";
      for (size_t c = 0; c < commands.size(); ++c) text.append(c ? ", " : "").append(commands[c]);
      return {text.append(")"), true};
    }
    sub = app.get_subcommand(w);
    break;
  }
  if (sub == nullptr) return {};
  const std::vector<std::string> own = long_names(*sub), top = long_names(app);
  for (++i; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (w == "--") break;  // positional words follow
    if (w.rfind("--", 0) != 0 || w.size() == 2) continue;
    const std::string name =
        w.substr(2, w.find('=') == std::string::npos ? std::string::npos : w.find('=') - 2);
    if (std::find(own.begin(), own.end(), name) != own.end() ||
        std::find(top.begin(), top.end(), name) != top.end())
      continue;
    const std::string near = nearest_name(name, own);
    if (!near.empty()) {
      std::string text = "unknown option --" + name;
      return {text.append(" of ")
                  .append(sub->get_name())
                  .append("; did you mean --")
                  .append(near)
                  .append("?")};
    }
  }
  return {};
}

}  // namespace heed::cli
