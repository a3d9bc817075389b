// A back-off n-gram language model as ARPA files hold it (the format SRILM and KenLM write):
// per n-gram (n = 1..N) log10 p(w | h) and, for those that are contexts, a back-off weight:
//   p(w | h) = p*(h w)                        when h w is listed
//            = bo(h) p(w | h_2 .. h_{n-1})    otherwise (bo = 1 when h is not listed)
// Sentences are wrapped in <s> ... </s>; <s> is a context only (its p is 0, "-99" in ARPA);
// words the model lacks are <unk>. Estimation (modified Kneser–Ney) is train/kneser_ney.h;
// CTC's prefix search reads it (decode/ctc_search.h).
// Leaves out: quantised or binary formats (KenLM's trie), pruning.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace heed {

class NgramLm {
 public:
  static constexpr int32_t kUnk = 0, kBos = 1, kEos = 2;  // ids of <unk>, <s>, </s>
  struct Entry {
    float log10_p = 0;        // log10 p*(h w)
    float log10_backoff = 0;  // log10 bo(h w), as a context
  };

  // An empty model of the given order with the three special words.
  explicit NgramLm(int order = 3);
  // An ARPA file; a malformed line, a count that disagrees with its section, an n-gram whose
  // words are missing from the unigrams or longer than the order: an Error naming file and line.
  static NgramLm read_arpa(const std::string& path);
  // The ARPA text (unigrams first, each order in the order added), written atomically.
  std::string arpa() const;
  void write_arpa(const std::string& path) const;

  int order() const { return order_; }
  int32_t id(const std::string& word) const;  // kUnk when absent
  const std::vector<std::string>& words() const { return words_; }
  int32_t add_word(const std::string& word);  // its id (new or existing)
  // n-gram `ids` (1 <= n <= order) gets `e`
  void set(std::span<const int32_t> ids, Entry e);
  const Entry* find(std::span<const int32_t> ids) const;
  size_t count(int n) const { return grams_[static_cast<size_t>(n - 1)].size(); }

  // log10 p(w | context), backing off; only the last order - 1 words of the context count.
  double log10_prob(std::span<const int32_t> context, int32_t w) const;

 private:
  struct Hash {
    size_t operator()(const std::vector<int32_t>& v) const;
  };
  using Table = std::unordered_map<std::vector<int32_t>, Entry, Hash>;
  int order_;
  std::vector<std::string> words_;
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<Table> grams_;                             // [n - 1]: the n-grams
  std::vector<std::vector<std::vector<int32_t>>> keys_;  // [n - 1]: in the order added (output)
};

}  // namespace heed
