// Vocabulary construction, lookup and files.
// Leaves out: frequency-based sampling and shared source/target vocabularies (a caller
// builds one from both sides when it wants that).
#include "heed/data/vocab.h"

#include <algorithm>
#include <map>

#include "heed/data/text.h"
#include "heed/io/files.h"
#include "heed/util/error.h"

namespace heed {

namespace {
constexpr const char* kSpecialTokens[] = {"<pad>", "<s>", "</s>", "<unk>"};
}

Vocab::Vocab() {
  for (const char* t : kSpecialTokens) add(t);
}

void Vocab::add(const std::string& token) {
  ids_.emplace(token, static_cast<int32_t>(tokens_.size()));
  tokens_.push_back(token);
}

Vocab Vocab::build(const std::vector<std::vector<std::string>>& sentences,
                   const VocabOptions& options) {
  std::map<std::string, int64_t> counts;
  for (const auto& s : sentences)
    for (const auto& t : s) ++counts[t];
  std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  Vocab v;
  for (const auto& [token, n] : sorted) {
    if (n < options.min_freq) break;
    if (options.max_size > 0 && v.size() - kSpecials >= options.max_size) break;
    if (!v.ids_.count(token)) v.add(token);
  }
  return v;
}

int32_t Vocab::id(std::string_view token) const {
  auto it = ids_.find(std::string(token));
  return it == ids_.end() ? kUnk : it->second;
}

const std::string& Vocab::token(int32_t id) const {
  check(id >= 0 && id < size(), "token id ", id, " is outside the vocabulary of ", size());
  return tokens_[id];
}

std::vector<int32_t> Vocab::encode(const std::vector<std::string>& tokens) const {
  std::vector<int32_t> ids;
  ids.reserve(tokens.size());
  for (const auto& t : tokens) ids.push_back(id(t));
  return ids;
}

std::vector<std::string> Vocab::decode(const std::vector<int32_t>& ids) const {
  std::vector<std::string> out;
  for (int32_t i : ids) {
    if (i == kEos) break;
    if (i == kPad || i == kBos) continue;
    out.push_back(token(i));
  }
  return out;
}

std::string Vocab::serialize() const {
  std::string s;
  for (const auto& t : tokens_) s += t + "\n";
  return s;
}

void Vocab::save(const std::string& path) const {
  write_file_atomic(path, serialize());
}

Vocab Vocab::load(const std::string& path) {
  std::vector<std::string> lines = read_lines(path);
  check(lines.size() >= kSpecials, path, ": a vocabulary needs at least the ", kSpecials,
        " special tokens");
  for (int i = 0; i < kSpecials; ++i)
    check(lines[i] == kSpecialTokens[i], path, ":", i + 1, ": expected the special token ",
          kSpecialTokens[i], ", found \"", lines[i], "\"");
  Vocab v;
  for (size_t i = kSpecials; i < lines.size(); ++i) {
    if (i + 1 == lines.size() && lines[i].empty()) break;
    check(!lines[i].empty(), path, ":", i + 1, ": empty token");
    check(!v.ids_.count(lines[i]), path, ":", i + 1, ": duplicate token \"", lines[i], "\"");
    v.add(lines[i]);
  }
  return v;
}

}  // namespace heed
