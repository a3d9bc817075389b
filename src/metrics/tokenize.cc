// sacreBLEU's tokenisers and Python's string semantics (definitions in the header). The regular
// expressions sacreBLEU applies are written above the loops that apply them: each loop scans
// left to right and replaces non-overlapping matches, as Python's re.sub does.
// Leaves out: invalid UTF-8 (each stray byte is taken as one code point).
#include "heed/metrics/tokenize.h"

#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

namespace heed {
namespace {

// One code point of `s` at `i`: its value, and `i` moved past it.
char32_t next_code_point(std::string_view s, size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  const size_t len = b < 0x80           ? 1
                     : (b >> 5) == 0x6  ? 2
                     : (b >> 4) == 0xe  ? 3
                     : (b >> 3) == 0x1e ? 4
                                        : 1;
  if (len == 1 || i + len > s.size()) {
    ++i;
    return b;
  }
  char32_t c = b & (0x7f >> len);
  for (size_t k = 1; k < len; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
  i += len;
  return c;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xe0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  }
}

std::u32string code_points(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) out += next_code_point(s, i);
  return out;
}

// Python's str.isspace(): general category Zs, or bidirectional class WS, B or S.
bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
         c == 0x205f || c == 0x3000;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Unicode general categories N (numbers), P (punctuation) and S (symbols).
bool is_number(char32_t c) {
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_N_MASK) != 0;
}
bool is_punct(char32_t c) {
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_P_MASK) != 0;
}
bool is_symbol(char32_t c) {
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_S_MASK) != 0;
}

std::string join_split(std::string_view s) {
  std::string out;
  for (const std::string& w : unicode_split(s)) {
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

// One pass of Python's re.sub with "(x)" -> " \1 ": each unit where `x` holds, spaced.
template <class Str, class Pred>
Str split_off(const Str& s, Pred x) {
  Str out;
  out.reserve(s.size() * 2);
  for (auto c : s) {
    if (x(c)) out += ' ';
    out += c;
    if (x(c)) out += ' ';
  }
  return out;
}

// One pass of Python's re.sub with "(x)(y)" -> "\1 \2 " (Space::After) or " \1 \2"
// (Space::Before): matches found left to right, none overlapping.
enum class Space { Before, After };
template <class Str, class First, class Second>
Str split_pairs(const Str& s, First x, Second y, Space space) {
  Str out;
  out.reserve(s.size() * 2);
  for (size_t i = 0; i < s.size();) {
    if (i + 1 < s.size() && x(s[i]) && y(s[i + 1])) {
      if (space == Space::Before) out += ' ';
      out += s[i];
      out += ' ';
      out += s[i + 1];
      if (space == Space::After) out += ' ';
      i += 2;
    } else {
      out += s[i++];
    }
  }
  return out;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
}

}  // namespace

std::span<const Named<BleuTokenize>> names(BleuTokenize) {
  static constexpr Named<BleuTokenize> kNames[] = {{BleuTokenize::V13a, "13a"},
                                                   {BleuTokenize::Intl, "intl"},
                                                   {BleuTokenize::Char, "char"},
                                                   {BleuTokenize::None, "none"}};
  return kNames;
}

std::vector<std::string> unicode_split(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  for (size_t i = 0; i < line.size();) {
    const size_t start = i;
    if (is_space(next_code_point(line, i))) {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word.append(line.substr(start, i - start));
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

std::string_view unicode_rstrip(std::string_view line) {
  size_t end = 0;  // the end of the last non-space code point
  for (size_t i = 0; i < line.size();)
    if (!is_space(next_code_point(line, i))) end = i;
  return line.substr(0, end);
}

std::string unicode_lower(std::string_view line) {
  std::string out;
  icu::UnicodeString::fromUTF8(icu::StringPiece(line.data(), static_cast<int32_t>(line.size())))
      .toLower(icu::Locale::getRoot())
      .toUTF8String(out);
  return out;
}

namespace {

// tokenize_13a's and tokenize_intl's text before runs of spaces are collapsed: what BLEU splits
// into tokens directly, and the tokenisers join back.
std::string spaced_13a(std::string_view line) {
  std::string s(line);
  replace_all(s, "<skipped>", "");
  replace_all(s, "-\n", "");
  replace_all(s, "\n", " ");
  replace_all(s, "&quot;", "\"");
  replace_all(s, "&amp;", "&");
  replace_all(s, "&lt;", "<");
  replace_all(s, "&gt;", ">");
  // The passes run on bytes: every character they match or require is ASCII, and a byte of a
  // multi-byte character is "[^0-9]" as the whole character is, so the result is the same.
  auto not_digit = [](char c) { return !is_digit(c); };
  auto period_comma = [](char c) { return c == '.' || c == ','; };
  // ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> " \1 "
  s = split_off(" " + s + " ", [](char c) {
    return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
           (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
  });
  s = split_pairs(s, not_digit, period_comma, Space::After);   // ([^0-9])([\.,]) -> "\1 \2 "
  s = split_pairs(s, period_comma, not_digit, Space::Before);  // ([\.,])([^0-9]) -> " \1 \2"
  return split_pairs(
      s, is_digit, [](char c) { return c == '-'; }, Space::After);  // ([0-9])(-) -> "\1 \2 "
}

std::string spaced_intl(std::string_view line) {
  auto not_number = [](char32_t c) { return !is_number(c); };
  std::u32string s = code_points(line);
  s = split_pairs(s, not_number, is_punct, Space::After);   // (\P{N})(\p{P}) -> "\1 \2 "
  s = split_pairs(s, is_punct, not_number, Space::Before);  // (\p{P})(\P{N}) -> " \1 \2"
  s = split_off(s, is_symbol);                              // (\p{S}) -> " \1 "
  std::string out;
  out.reserve(s.size() * 2);
  for (char32_t c : s) append_utf8(out, c);
  return out;
}

}  // namespace

std::string tokenize_13a(std::string_view line) {
  return join_split(spaced_13a(line));
}

std::string tokenize_intl(std::string_view line) {
  return join_split(spaced_intl(line));
}

std::vector<std::string> bleu_tokens(std::string_view line, BleuTokenize tokenize, bool lowercase) {
  std::string lowered;
  if (lowercase) {
    lowered = unicode_lower(line);
    line = lowered;
  }
  line = unicode_rstrip(line);
  switch (tokenize) {
    case BleuTokenize::None:
      return unicode_split(line);
    case BleuTokenize::V13a:
      return unicode_split(spaced_13a(line));
    case BleuTokenize::Intl:
      return unicode_split(spaced_intl(line));
    case BleuTokenize::Char:
      break;
  }
  // " ".join(line), then split: every code point but whitespace is a token
  std::vector<std::string> out;
  for (size_t i = 0; i < line.size();) {
    const size_t start = i;
    if (!is_space(next_code_point(line, i))) out.emplace_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace heed
