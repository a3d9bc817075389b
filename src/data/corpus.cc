// Corpus readers for the published formats (see the header).
// Leaves out: streaming very large corpora (the shared datasets are at most a few MB).
#include "heed/data/corpus.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "heed/data/speech_corpus.h"
#include "heed/data/text.h"
#include "heed/util/error.h"

namespace heed {
namespace {

bool blank(const std::string& s) {
  return s.find_first_not_of(" \t") == std::string::npos;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> cols;
  size_t start = 0;
  for (;;) {
    size_t tab = line.find('\t', start);
    cols.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return cols;
    start = tab + 1;
  }
}

bool cmudict_word(std::string_view w) {
  if (w.empty()) return false;
  for (char c : w)
    if (!((c >= 'A' && c <= 'Z') || c == '\'' || c == '.' || c == '-' || c == '_' ||
          (c >= '0' && c <= '9')))
      return false;
  return true;
}

// "WORD  PH PH": returns false when the line does not have that shape.
bool parse_cmudict_line(const std::string& line, std::string* word, std::string* phones) {
  size_t sep = line.find("  ");
  if (sep == std::string::npos || sep == 0) return false;
  *word = line.substr(0, sep);
  *phones = line.substr(sep + 2);
  if (!cmudict_word(*word) || blank(*phones)) return false;
  for (char c : *phones)
    if (!((c >= 'A' && c <= 'Z') || c == ' ' || (c >= '0' && c <= '2'))) return false;
  return true;
}

}  // namespace

Corpus read_parallel(const std::string& src_path, const std::string& tgt_path) {
  std::vector<std::string> src = read_lines(src_path), tgt = read_lines(tgt_path);
  check(src.size() == tgt.size(), "parallel files differ in length: ", src_path, " has ",
        src.size(), " lines, ", tgt_path, " has ", tgt.size());
  Corpus c{src_path + " / " + tgt_path, {}};
  c.pairs.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    check(!blank(src[i]), src_path, ":", i + 1, ": empty line");
    check(!blank(tgt[i]), tgt_path, ":", i + 1, ": empty line");
    c.pairs.push_back({src[i], tgt[i], static_cast<int64_t>(i + 1)});
  }
  return c;
}

Corpus read_tsv(const std::string& path, int src_col, int tgt_col) {
  std::vector<std::string> lines = read_lines(path);
  Corpus c{path, {}};
  int need = std::max(src_col, tgt_col) + 1;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i + 1 == lines.size() && lines[i].empty()) break;  // a trailing empty line
    auto cols = split_tabs(lines[i]);
    check(static_cast<int>(cols.size()) >= need, path, ":", i + 1, ": expected at least ", need,
          " tab-separated columns, found ", cols.size());
    check(!blank(cols[src_col]) && !blank(cols[tgt_col]), path, ":", i + 1, ": empty field");
    c.pairs.push_back({cols[src_col], cols[tgt_col], static_cast<int64_t>(i + 1)});
  }
  return c;
}

TsvColumns parse_tsv_columns(const std::string& spec) {
  int src = 0, tgt = 0;
  char comma = 0, extra = 0;
  const int n = std::sscanf(spec.c_str(), "%d%c%d%c", &src, &comma, &tgt, &extra);
  check(n == 3 && comma == ',' && src >= 1 && tgt >= 1 && src != tgt, "bad TSV columns '", spec,
        "' (expected two different 1-based column numbers SRC,TGT such as 2,1)");
  return {src - 1, tgt - 1};
}

Corpus read_cmudict(const std::string& path) {
  std::vector<std::string> lines = read_lines(path);
  Corpus c{path, {}};
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind(";;;", 0) == 0) continue;  // comments of the original dictionary
    std::string word, phones;
    check(parse_cmudict_line(lines[i], &word, &phones), path, ":", i + 1,
          ": not a CMUdict entry (expected \"WORD  PH PH ...\": upper-case word, two spaces, "
          "phones), got \"",
          lines[i].substr(0, 60), "\"");
    c.pairs.push_back({word, join_words(split_words(phones)), static_cast<int64_t>(i + 1)});
  }
  return c;
}

CorpusFormat detect_format(const std::string& path) {
  if (std::filesystem::is_directory(path) &&
      std::filesystem::exists(std::filesystem::path(path) / "wav.scp"))
    return CorpusFormat::Audio;
  std::vector<std::string> lines = read_lines(path);
  const std::string& first = lines.front();
  if (const size_t tab = first.find('\t'); tab != std::string::npos)
    return has_audio_extension(first.substr(0, tab)) ? CorpusFormat::Audio : CorpusFormat::Tsv;
  std::string w, p;
  if (parse_cmudict_line(first, &w, &p)) return CorpusFormat::Cmudict;
  return CorpusFormat::Parallel;
}

std::span<const Named<CorpusFormat>> names(CorpusFormat) {
  static constexpr Named<CorpusFormat> kNames[] = {{CorpusFormat::Auto, "auto"},
                                                   {CorpusFormat::Parallel, "parallel"},
                                                   {CorpusFormat::Tsv, "tsv"},
                                                   {CorpusFormat::Cmudict, "cmudict"},
                                                   {CorpusFormat::Audio, "audio"}};
  return kNames;
}

CorpusFormat parse_format(const std::string& name) {
  return parse_name<CorpusFormat>(name, "data format");
}

Corpus read_corpus(CorpusFormat format, const std::string& src_path, const std::string& tgt_path,
                   TsvColumns columns) {
  if (format == CorpusFormat::Auto) format = detect_format(src_path);
  switch (format) {
    case CorpusFormat::Parallel:
      check(!tgt_path.empty(), src_path, ": parallel text needs a target file as well");
      return read_parallel(src_path, tgt_path);
    case CorpusFormat::Tsv:
      return read_tsv(src_path, columns.src, columns.tgt);
    case CorpusFormat::Cmudict:
      return read_cmudict(src_path);
    case CorpusFormat::Audio:
      fail(src_path, ": a speech corpus is read by data/speech_corpus.h, not as text");
    case CorpusFormat::Auto:
      break;
  }
  fail(src_path, ": unknown format");
}

Split split_of_group(int64_t k) {
  if (k % 50 == 0) return Split::Test;
  if (k % 50 == 25) return Split::Dev;
  return Split::Train;
}

namespace {

// The group number (1-based, in order of first line) of every pair: union-find over the pairs,
// each joined to the first pair with the same source and the first with the same target.
std::vector<int64_t> sentence_groups(const Corpus& c) {
  const size_t n = c.pairs.size();
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), size_t{0});
  auto root = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  // the earlier root stays the root, so a group's root is its first pair
  auto join = [&](size_t a, size_t b) {
    a = root(a), b = root(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  };
  std::unordered_map<std::string_view, size_t> first_src, first_tgt;
  for (size_t i = 0; i < n; ++i) {
    join(i, first_src.try_emplace(c.pairs[i].src, i).first->second);
    join(i, first_tgt.try_emplace(c.pairs[i].tgt, i).first->second);
  }
  std::vector<int64_t> number(n, 0), group(n);
  int64_t groups = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t r = root(i);
    if (number[r] == 0) number[r] = ++groups;  // r <= i: numbered in order of first line
    group[i] = number[r];
  }
  return group;
}

}  // namespace

std::span<const Named<Split>> names(Split) {
  static constexpr Named<Split> kNames[] = {
      {Split::Train, "train"}, {Split::Dev, "dev"}, {Split::Test, "test"}};
  return kNames;
}

Split parse_split(const std::string& name) {
  return parse_name<Split>(name, "split");
}

Corpus select_split(const Corpus& all, Split split) {
  const std::vector<int64_t> group = sentence_groups(all);
  Corpus c{all.origin, {}};
  for (size_t i = 0; i < all.pairs.size(); ++i)
    if (split_of_group(group[i]) == split) c.pairs.push_back(all.pairs[i]);
  return c;
}

std::map<std::string, std::vector<std::string>> group_alternatives(const Corpus& corpus) {
  std::map<std::string, std::vector<std::string>> refs;
  for (const auto& p : corpus.pairs) refs[p.src].push_back(p.tgt);
  return refs;
}

}  // namespace heed
