// Transcript normalisation (see the header).
#include "heed/data/transcript.h"

#include <cstdint>

namespace heed {

namespace {

// The base letter of U+00C0..U+00FF (lower case), or 0 for those without one (x, /, ß, æ, ð,
// ø, þ): what NFKD leaves of them once the combining marks are dropped.
char latin1_base(uint32_t c) {
  static constexpr char kBase[64 + 1] =
      "aaaaaaAceeeeiiii"   // C0-CF (C6 Æ has no decomposition)
      "Dnooooo*Ouuuuy##"   // D0-DF (D0 Ð, D7 ×, D8 Ø, DE Þ, DF ß: none)
      "aaaaaaAceeeeiiii"   // E0-EF (E6 æ: none)
      "Dnooooo/Ouuuuy#y";  // F0-FF (F0 ð, F7 ÷, F8 ø, FE þ: none)
  const char b = kBase[c - 0xC0];
  return b >= 'a' && b <= 'z' ? b : 0;
}

}  // namespace

std::string normalise_transcript(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool space = true;  // at the start, or after a space: no space to add
  auto put = [&](char c) {
    if (c == ' ') {
      space = true;
      return;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  };
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    uint32_t c = b;
    size_t n = 1;
    if (b >= 0xC0 && b < 0xE0 && i + 1 < text.size()) {
      c = ((b & 0x1Fu) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3Fu);
      n = 2;
    } else if (b >= 0xE0 && b < 0xF0 && i + 2 < text.size()) {
      c = ((b & 0x0Fu) << 12) | ((static_cast<unsigned char>(text[i + 1]) & 0x3Fu) << 6) |
          (static_cast<unsigned char>(text[i + 2]) & 0x3Fu);
      n = 3;
    } else if (b >= 0xF0) {
      n = i + 3 < text.size() ? 4 : text.size() - i;
      c = 0x10000;  // outside the BMP: no letter of a-z
    }
    i += n;
    if (c >= 'A' && c <= 'Z') {
      put(static_cast<char>(c - 'A' + 'a'));
    } else if ((c >= 'a' && c <= 'z') || c == '\'') {
      put(static_cast<char>(c));
    } else if (c == 0x2019 || c == 0x2018 || c == '`') {
      put('\'');
    } else if (c >= 0xC0 && c <= 0xFF && latin1_base(c) != 0) {
      put(latin1_base(c));
    } else {
      put(' ');
    }
  }
  return out;
}

}  // namespace heed
