// The text conventions of sacreBLEU (Post 2018), which scores must follow to be comparable:
// its tokenisers (13a, intl, char, none) and the Python string semantics it relies on
// (str.split()'s Unicode whitespace, str.lower()'s full case mapping).
// Leaves out: the language-specific tokenisers (zh, ja-mecab, ko-mecab, spm, flores).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "heed/util/names.h"

namespace heed {

enum class BleuTokenize { None, V13a, Intl, Char };
std::span<const Named<BleuTokenize>> names(BleuTokenize);  // "13a" | "intl" | "char" | "none"

// The words of `line` split at Unicode whitespace as Python's str.split() defines it (ASCII
// \t\n\v\f\r and space, \x1c-\x1f, U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029,
// U+202F, U+205F, U+3000), runs of it and the ends ignored.
std::vector<std::string> unicode_split(std::string_view line);
// `line` without its trailing Unicode whitespace (Python's str.rstrip()).
std::string_view unicode_rstrip(std::string_view line);
// Full Unicode lowercasing, language-independent, as Python's str.lower() (ICU's root locale).
std::string unicode_lower(std::string_view line);

// mteval-v13a.pl's tokenisation as sacreBLEU's default: XML entities unescaped, punctuation
// and symbols split off, periods and commas kept inside numbers; words joined by one space.
std::string tokenize_13a(std::string_view line);
// mteval-v14.pl's international tokenisation: Unicode punctuation split off unless it sits
// between digits, Unicode symbols always.
std::string tokenize_intl(std::string_view line);

// The BLEU tokens of one line as sacreBLEU makes them: optionally lowercased, right-stripped,
// tokenised, split at whitespace (`char`: every non-whitespace code point is a token).
std::vector<std::string> bleu_tokens(std::string_view line, BleuTokenize tokenize, bool lowercase);

}  // namespace heed
