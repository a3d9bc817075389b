// Did-you-mean (see the header).
#include "suggest.h"

#include "heed/util/nearest.h"

#include <algorithm>
#include <cstdint>

namespace heed::cli {

namespace {

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
