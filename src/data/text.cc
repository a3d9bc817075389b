// UTF-8 validation, line reading and unit splitting.
// Leaves out: any encoding but UTF-8 (the shared datasets are all UTF-8 or ASCII).
#include "heed/data/text.h"

#include <cctype>
#include <istream>
#include <sstream>

#include "heed/io/files.h"
#include "heed/util/error.h"

namespace heed {

bool is_valid_utf8(std::string_view s, size_t* bad_offset) {
  size_t i = 0, n = s.size();
  auto bad = [&](size_t at) {
    if (bad_offset) *bad_offset = at;
    return false;
  };
  while (i < n) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > n) return bad(i);
    uint32_t cp = c & (0x7F >> len);
    for (int k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return bad(i);
      cp = (cp << 6) | (cc & 0x3F);
    }
    // overlong forms, UTF-16 surrogates, beyond Unicode
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
      return bad(i);
    i += len;
  }
  return true;
}

std::string checked_line(std::string_view line, const std::string& name, size_t lineno) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t bad = 0;
  check(line.find('\0') == std::string_view::npos, name, ":", lineno, ": NUL byte in the line");
  // (validated first: as an argument beside `bad`, its value would be read before the check)
  const bool valid = is_valid_utf8(line, &bad);
  check(valid, name, ":", lineno, ": invalid UTF-8 at byte ", bad + 1, " of the line");
  return std::string(line);
}

namespace {

// Lines of a text (LF or CRLF, the last newline optional), each checked: no NUL, valid UTF-8.
std::vector<std::string> checked_lines(std::string_view text, const std::string& name) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(checked_line(text.substr(start, end - start), name, lines.size() + 1));
    start = end + 1;
  }
  return lines;
}

}  // namespace

std::vector<std::string> read_lines(const std::string& path) {
  std::string text = read_file(path);
  check(!text.empty(), path, ": the file is empty");
  return checked_lines(text, path);
}

std::vector<std::string> read_lines(std::istream& in, const std::string& name) {
  std::ostringstream text;
  text << in.rdbuf();
  check(!in.bad(), name, ": read error");
  return checked_lines(text.str(), name);
}

void lowercase_ascii(std::string& s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

std::vector<std::string> split_words(std::string_view line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.emplace_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

std::vector<std::string> split_chars(std::string_view line) {
  std::vector<std::string> out;
  for (size_t i = 0; i < line.size();) {
    auto c = static_cast<unsigned char>(line[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
    len = std::min(len, line.size() - i);
    if (line[i] == ' ')
      out.emplace_back(kSpaceUnit);
    else
      out.emplace_back(line.substr(i, len));
    i += len;
  }
  return out;
}

std::string join_words(const std::vector<std::string>& units) {
  std::string s;
  for (size_t i = 0; i < units.size(); ++i) {
    if (i) s += ' ';
    s += units[i];
  }
  return s;
}

std::string join_chars(const std::vector<std::string>& units) {
  std::string s;
  for (const auto& u : units) s += u == kSpaceUnit ? std::string(" ") : u;
  return s;
}

}  // namespace heed
