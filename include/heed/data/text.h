// UTF-8 text input: whole files as validated lines, and the split of a line into units
// (whitespace words or Unicode code points).
// Leaves out: normalisation and tokenisation (the shared data is used as published; Moses-
// tokenised Multi30k comes tokenised) and subwords (data/subword.h, SentencePiece).
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace heed {

// True when s is well-formed UTF-8 (no overlong forms, surrogates or code points > U+10FFFF);
// otherwise *bad_offset is the byte offset of the first bad sequence.
bool is_valid_utf8(std::string_view s, size_t* bad_offset = nullptr);

// One line as read_lines gives it: a final CR dropped (CRLF endings), then checked: no NUL,
// valid UTF-8; errors name `name` and the 1-based `lineno`. For readers of one line at a time
// (heed translate --online).
std::string checked_line(std::string_view line, const std::string& name, size_t lineno);

// All lines of a text file (LF or CRLF endings, a missing final newline is fine). Errors name
// the file and line: unreadable file, empty file, invalid UTF-8, NUL byte.
std::vector<std::string> read_lines(const std::string& path);
// All lines of a stream (stdin, say), with the same checks; `name` names it in errors. An
// empty stream gives no lines.
std::vector<std::string> read_lines(std::istream& in, const std::string& name);

// A-Z to a-z in place; every other byte (UTF-8 beyond ASCII included) as it is. What the SST
// tree reader does to its words, and so what a model trained on them does to its input.
void lowercase_ascii(std::string& s);

// Whitespace-separated words (runs of space/tab collapse; no empty words).
std::vector<std::string> split_words(std::string_view line);
// Unicode code points, each as its UTF-8 bytes; a space becomes kSpaceUnit so that character
// output can be turned back into text (join_chars). The line must be valid UTF-8.
inline constexpr std::string_view kSpaceUnit = "\xe2\x96\x81";  // U+2581 '▁', as SentencePiece
std::vector<std::string> split_chars(std::string_view line);
std::string join_words(const std::vector<std::string>& units);
std::string join_chars(const std::vector<std::string>& units);

}  // namespace heed
