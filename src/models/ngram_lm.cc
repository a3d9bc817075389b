// The back-off n-gram model and its ARPA files (see the header).
#include "heed/models/ngram_lm.h"

#include <charconv>
#include <cmath>
#include <sstream>

#include "heed/data/text.h"
#include "heed/io/files.h"
#include "heed/util/error.h"

namespace heed {

size_t NgramLm::Hash::operator()(const std::vector<int32_t>& v) const {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the ids
  for (int32_t x : v) h = (h ^ static_cast<uint32_t>(x)) * 1099511628211ull;
  return static_cast<size_t>(h);
}

NgramLm::NgramLm(int order) : order_(order) {
  check(order >= 1 && order <= 16, "n-gram order must be in 1..16, got ", order);
  grams_.resize(static_cast<size_t>(order));
  keys_.resize(static_cast<size_t>(order));
  add_word("<unk>");
  add_word("<s>");
  add_word("</s>");
}

int32_t NgramLm::id(const std::string& word) const {
  const auto it = ids_.find(word);
  return it == ids_.end() ? kUnk : it->second;
}

int32_t NgramLm::add_word(const std::string& word) {
  const auto [it, added] = ids_.try_emplace(word, static_cast<int32_t>(words_.size()));
  if (added) words_.push_back(word);
  return it->second;
}

void NgramLm::set(std::span<const int32_t> ids, Entry e) {
  check(!ids.empty() && static_cast<int>(ids.size()) <= order_, "n-gram of ", ids.size(),
        " words in a model of order ", order_);
  std::vector<int32_t> key(ids.begin(), ids.end());
  Table& t = grams_[ids.size() - 1];
  const auto [it, added] = t.try_emplace(key, e);
  if (added)
    keys_[ids.size() - 1].push_back(std::move(key));
  else
    it->second = e;
}

const NgramLm::Entry* NgramLm::find(std::span<const int32_t> ids) const {
  if (ids.empty() || static_cast<int>(ids.size()) > order_) return nullptr;
  const Table& t = grams_[ids.size() - 1];
  const auto it = t.find(std::vector<int32_t>(ids.begin(), ids.end()));
  return it == t.end() ? nullptr : &it->second;
}

double NgramLm::log10_prob(std::span<const int32_t> context, int32_t w) const {
  // the longest listed n-gram ending in w, plus the back-off weights of the longer contexts
  const size_t keep = std::min(context.size(), static_cast<size_t>(order_ - 1));
  std::vector<int32_t> gram(context.end() - static_cast<std::ptrdiff_t>(keep), context.end());
  gram.push_back(w);
  double backoff = 0;
  for (size_t start = 0; start < gram.size(); ++start) {
    const std::span<const int32_t> g(gram.data() + start, gram.size() - start);
    if (const Entry* e = find(g)) return backoff + e->log10_p;
    if (const Entry* h = find(g.first(g.size() - 1))) backoff += h->log10_backoff;
  }
  return backoff + find(std::span<const int32_t>(&kUnk, 1))->log10_p;  // not even a unigram
}

namespace {

// A number of an ARPA line, or an Error naming the file and line.
float arpa_number(const std::string& field, const std::string& path, size_t line) {
  float v = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  check(ec == std::errc() && end == field.data() + field.size() && std::isfinite(v), path, ":",
        line, ": '", field,
        "' is not a number (ARPA: log10 p, the words, then an optional "
        "back-off)");
  return v;
}

}  // namespace

NgramLm NgramLm::read_arpa(const std::string& path) {
  const std::vector<std::string> lines = read_lines(path);
  size_t k = 0;
  auto where = [&] { return path + ":" + std::to_string(k + 1); };
  while (k < lines.size() && split_words(lines[k]).empty()) ++k;
  check(k < lines.size() && lines[k] == "\\data\\", path,
        ": not an ARPA file (its first line must be \\data\\)");
  std::vector<size_t> counts;
  for (++k; k < lines.size() && lines[k].rfind("ngram ", 0) == 0; ++k) {
    const std::string& l = lines[k];
    const size_t eq = l.find('=');
    int n = 0;
    size_t c = 0;
    const bool ok = eq != std::string::npos &&
                    std::from_chars(l.data() + 6, l.data() + eq, n).ec == std::errc() &&
                    std::from_chars(l.data() + eq + 1, l.data() + l.size(), c).ec == std::errc();
    check(ok && n == static_cast<int>(counts.size()) + 1, where(),
          ": malformed count line (expected 'ngram ", counts.size() + 1, "=COUNT')");
    counts.push_back(c);
  }
  check(!counts.empty() && counts.size() <= 16, where(),
        ": an ARPA file needs 'ngram N=COUNT' "
        "lines for N = 1..order (at most 16)");
  NgramLm lm(static_cast<int>(counts.size()));
  lm.words_.clear();
  lm.ids_.clear();
  for (int n = 1; n <= lm.order_; ++n) {
    while (k < lines.size() && split_words(lines[k]).empty()) ++k;
    std::string section = "\\";  // "\\n-grams:", built up (GCC 12 warns on "\\" + string)
    section.append(std::to_string(n)).append("-grams:");
    check(k < lines.size() && lines[k] == section, where(), ": expected the section \\", n,
          "-grams:");
    size_t seen = 0;
    for (++k; k < lines.size() && !split_words(lines[k]).empty(); ++k) {
      const std::vector<std::string> f = split_words(lines[k]);
      check(f.size() == static_cast<size_t>(n) + 1 || f.size() == static_cast<size_t>(n) + 2,
            where(), ": malformed ", n, "-gram line (expected log10 p, ", n,
            " word(s) and an optional back-off; got ", f.size(), " fields)");
      Entry e{arpa_number(f[0], path, k + 1), 0.f};
      if (f.size() == static_cast<size_t>(n) + 2)
        e.log10_backoff = arpa_number(f.back(), path, k + 1);
      std::vector<int32_t> ids;
      for (int i = 1; i <= n; ++i) {
        const std::string& w = f[static_cast<size_t>(i)];
        if (n == 1) {
          check(!lm.ids_.contains(w), where(), ": the unigram '", w, "' is listed twice");
          ids.push_back(lm.add_word(w));
        } else {
          const auto it = lm.ids_.find(w);
          check(it != lm.ids_.end(), where(), ": '", w, "' is not among the unigrams");
          ids.push_back(it->second);
        }
      }
      lm.set(ids, e);
      ++seen;
    }
    check(seen == counts[static_cast<size_t>(n - 1)], path, ": the header counts ",
          counts[static_cast<size_t>(n - 1)], " ", n, "-grams, the section lists ", seen);
  }
  while (k < lines.size() && split_words(lines[k]).empty()) ++k;
  check(k < lines.size() && lines[k] == "\\end\\", where(), ": expected \\end\\");
  for (const char* w : {"<unk>", "<s>", "</s>"})
    check(lm.ids_.contains(w), path, ": the unigrams lack ", w);
  // the special words at their fixed ids: <unk> <s> </s> first, as a new model has them
  NgramLm out(lm.order_);
  for (const std::string& w : lm.words_) out.add_word(w);
  std::vector<int32_t> map(lm.words_.size());
  for (size_t i = 0; i < lm.words_.size(); ++i) map[i] = out.id(lm.words_[i]);
  for (size_t n = 0; n < lm.keys_.size(); ++n)
    for (const auto& key : lm.keys_[n]) {
      std::vector<int32_t> ids(key.size());
      for (size_t i = 0; i < key.size(); ++i) ids[i] = map[static_cast<size_t>(key[i])];
      out.set(ids, lm.grams_[n].at(key));
    }
  return out;
}

std::string NgramLm::arpa() const {
  std::ostringstream o;
  o.precision(7);
  o << "\\data\\\n";
  for (int n = 1; n <= order_; ++n) o << "ngram " << n << "=" << count(n) << "\n";
  for (int n = 1; n <= order_; ++n) {
    o << "\n\\" << n << "-grams:\n";
    for (const auto& key : keys_[static_cast<size_t>(n - 1)]) {
      const Entry& e = grams_[static_cast<size_t>(n - 1)].at(key);
      o << e.log10_p << "\t";
      for (size_t i = 0; i < key.size(); ++i)
        o << (i ? " " : "") << words_[static_cast<size_t>(key[i])];
      if (n < order_ && e.log10_backoff != 0.f) o << "\t" << e.log10_backoff;
      o << "\n";
    }
  }
  o << "\n\\end\\\n";
  return o.str();
}

void NgramLm::write_arpa(const std::string& path) const {
  write_file_atomic(path, arpa());
}

}  // namespace heed
