// --config files (see the header).
#include "config_file.h"

#include <fstream>
#include <sstream>

namespace heed::cli {
namespace {

// CLI11 names a --config file's bad item ("train.hiden", "[train") but not its file or line:
// the first line of the given files that starts with the item's key, as "FILE:LINE".
std::string config_item_place(const std::vector<std::string>& files, const std::string& item) {
  const std::string key = item.substr(item.rfind('.') + 1);
  for (const auto& file : files) {
    std::ifstream in(file);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const size_t b = line.find_first_not_of(" \t");
      if (b == std::string::npos || line.compare(b, key.size(), key) != 0) continue;
      const size_t e = line.find_first_not_of(" \t", b + key.size());
      if (e == std::string::npos || line[e] == '=') return file + ":" + std::to_string(n);
    }
  }
  return files.empty() ? std::string("--config") : files.front();
}

}  // namespace

std::string config_sections(const std::string& flat) {
  std::istringstream in(flat);
  std::string line, top, section, body;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const size_t dot = line.rfind('.', eq);  // "train.lr": section train, key lr
    if (dot != std::string::npos && line.substr(0, dot) != section) {
      section = line.substr(0, dot);
      body.append("\n[").append(section).append("]\n");
    }
    std::string& out = dot == std::string::npos ? top : body;
    const size_t key = dot == std::string::npos ? 0 : dot + 1;
    out.append(line, key, eq - key).append(" = ").append(line, eq + 1).append("\n");
  }
  return body.empty() ? top : top + body.substr(top.empty() ? 1 : 0);
}

std::string config_error(const std::vector<std::string>& files, const std::string& message) {
  const std::string extras = "INI was not able to parse ";
  if (!message.starts_with(extras)) return {};
  const std::string item = message.substr(extras.size());
  const size_t dot = item.rfind('.');
  const std::string key = item.substr(dot + 1), section = item.substr(0, dot);
  if (item.starts_with("["))
    return config_item_place(files, item) + ": cannot read the section header `" + item + "`";
  if (dot == std::string::npos)
    return config_item_place(files, item) + ": `" + item +
           "` is outside a section: a subcommand's options go in its [train], [translate], ... "
           "section";
  if (key == "++" || key == "--")  // CLI11's opening or closing of an unknown section
    return config_item_place(files, "[" + section + "]") + ": [" + section +
           "] is not a subcommand of heed (see `heed --help`)";
  return config_item_place(files, item) + ": `" + key + "` is not an option of `heed " + section +
         "` (see `heed " + section + " --help`)";
}

}  // namespace heed::cli
