// Vocabulary: token <-> id with the four special tokens at fixed ids, built from training
// text with size and frequency limits; unknown tokens map to <unk>.
// Leaves out: subword segmentation (SentencePiece models produce the tokens this maps).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace heed {

struct VocabOptions {
  int64_t max_size = 0;  // keep at most this many tokens besides the specials (0: no limit)
  int64_t min_freq = 1;  // drop tokens seen fewer times in training
};

class Vocab {
 public:
  static constexpr int32_t kPad = 0, kBos = 1, kEos = 2, kUnk = 3;
  static constexpr int32_t kSpecials = 4;

  Vocab();  // the four specials only
  // Tokens by descending frequency, ties in byte order (deterministic).
  static Vocab build(const std::vector<std::vector<std::string>>& sentences,
                     const VocabOptions& options = {});

  int32_t id(std::string_view token) const;  // kUnk when absent
  const std::string& token(int32_t id) const;
  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }
  std::vector<int32_t> encode(const std::vector<std::string>& tokens) const;
  // Ids to tokens, stopping at EOS and skipping PAD/BOS.
  std::vector<std::string> decode(const std::vector<int32_t>& ids) const;

  // One token per line, specials first. load() checks the specials and duplicates and names
  // the file and line of a problem.
  std::string serialize() const;
  void save(const std::string& path) const;
  static Vocab load(const std::string& path);

 private:
  void add(const std::string& token);
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> ids_;
};

}  // namespace heed
