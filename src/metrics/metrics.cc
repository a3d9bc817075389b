// BLEU, chrF and G2P error rates (definitions in the header).
// Leaves out: sentence-level BLEU smoothing variants other than sacreBLEU's "exp".
#include "heed/metrics/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>
#include <unordered_map>

#include "heed/data/text.h"
#include "heed/util/error.h"

namespace heed {
namespace {

std::string lower_ascii(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

using NgramCounts = std::unordered_map<std::string, int64_t>;

NgramCounts ngrams(const std::vector<std::string>& toks, int n) {
  NgramCounts c;
  for (size_t i = 0; i + n <= toks.size(); ++i) {
    std::string key = toks[i];
    for (int k = 1; k < n; ++k) key += '\x1f' + toks[i + k];  // unit separator joins tokens
    ++c[key];
  }
  return c;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

std::string tokenize_13a(const std::string& in) {
  // mteval-v13a: unescape the four XML entities, then split off punctuation.
  std::string s = in;
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
      s.replace(p, from.size(), to);
  };
  replace_all("<skipped>", "");
  replace_all("-\n", "");
  replace_all("\n", " ");
  replace_all("&quot;", "\"");
  replace_all("&amp;", "&");
  replace_all("&lt;", "<");
  replace_all("&gt;", ">");
  static const std::regex punct(R"(([\{-\~\[-\` -\&\(-\+\:-\@\/]))");
  static const std::regex period_before(R"(([^0-9])([\.,]))");
  static const std::regex period_after(R"(([\.,])([^0-9]))");
  static const std::regex dash(R"(([0-9])(-))");
  s.insert(s.begin(), ' ');
  s.push_back(' ');
  s = std::regex_replace(s, punct, " $1 ");
  s = std::regex_replace(s, period_before, "$1 $2 ");
  s = std::regex_replace(s, period_after, " $1 $2");
  s = std::regex_replace(s, dash, "$1 $2 ");
  return join_words(split_words(s));
}

BleuScore corpus_bleu(const std::vector<std::string>& hyps,
                      const std::vector<std::vector<std::string>>& refs, const BleuOptions& o) {
  check(!refs.empty(), "BLEU needs at least one reference set");
  for (const auto& r : refs)
    check(r.size() == hyps.size(), "BLEU: ", hyps.size(), " hypotheses but a reference set of ",
          r.size(), " lines");
  auto prep = [&](const std::string& line) {
    std::string t = o.tokenize_13a ? tokenize_13a(line) : line;
    return split_words(o.lowercase ? lower_ascii(t) : t);
  };
  std::array<int64_t, 4> match{}, total{};
  BleuScore s;
  for (size_t i = 0; i < hyps.size(); ++i) {
    auto h = prep(hyps[i]);
    std::vector<std::vector<std::string>> rs;
    rs.reserve(refs.size());
    for (const auto& r : refs) rs.push_back(prep(r[i]));
    // the closest reference length, ties to the shorter
    int64_t best = -1;
    for (const auto& r : rs) {
      auto len = static_cast<int64_t>(r.size()), hl = static_cast<int64_t>(h.size());
      if (best < 0 || std::llabs(len - hl) < std::llabs(best - hl) ||
          (std::llabs(len - hl) == std::llabs(best - hl) && len < best))
        best = len;
    }
    s.hyp_len += static_cast<int64_t>(h.size());
    s.ref_len += best;
    for (int n = 1; n <= 4; ++n) {
      NgramCounts hc = ngrams(h, n), maxref;
      for (const auto& r : rs)
        for (const auto& [g, c] : ngrams(r, n)) maxref[g] = std::max(maxref[g], c);
      for (const auto& [g, c] : hc) {
        auto it = maxref.find(g);
        match[n - 1] += std::min(c, it == maxref.end() ? int64_t{0} : it->second);  // clipped
        total[n - 1] += c;
      }
    }
  }
  // log BLEU = min(0, 1 - r/c) + (1/4) sum_n log p_n
  double log_sum = 0, smooth = 1;
  bool zero = false;
  for (int n = 0; n < 4; ++n) {
    double p;
    if (total[n] == 0) {
      p = 0;
    } else if (match[n] == 0 && o.tokenize_13a) {  // sacreBLEU "exp" smoothing
      smooth *= 2;
      p = 1.0 / (smooth * static_cast<double>(total[n]));
    } else {
      p = static_cast<double>(match[n]) / static_cast<double>(total[n]);
    }
    s.precisions[n] = 100.0 * p;
    if (p <= 0)
      zero = true;
    else
      log_sum += std::log(p) / 4.0;
  }
  s.ratio = s.ref_len ? static_cast<double>(s.hyp_len) / static_cast<double>(s.ref_len) : 0;
  s.bp = s.hyp_len == 0 ? 0
         : s.hyp_len < s.ref_len
             ? std::exp(1.0 - static_cast<double>(s.ref_len) / static_cast<double>(s.hyp_len))
             : 1.0;
  s.score = zero ? 0.0 : 100.0 * s.bp * std::exp(log_sum);
  if (o.tokenize_13a)
    s.signature = "nrefs:" + std::to_string(refs.size()) +
                  "|case:" + (o.lowercase ? "lc" : "mixed") +
                  "|eff:no|tok:13a|smooth:exp|version:heed";
  return s;
}

std::string BleuScore::str() const {
  std::string out = "BLEU = " + fmt("%.2f", score) + " ";
  for (int n = 0; n < 4; ++n) {
    if (n) out += '/';
    out += fmt("%.1f", precisions[n]);
  }
  out += " (BP = " + fmt("%.3f", bp) + " ratio = " + fmt("%.3f", ratio) +
         " hyp_len = " + std::to_string(hyp_len) + " ref_len = " + std::to_string(ref_len) + ")";
  if (!signature.empty()) out += "  " + signature;
  return out;
}

ChrfScore corpus_chrf(const std::vector<std::string>& hyps,
                      const std::vector<std::vector<std::string>>& refs, int char_order,
                      double beta) {
  check(!refs.empty(), "chrF needs at least one reference set");
  for (const auto& r : refs)
    check(r.size() == hyps.size(), "chrF: ", hyps.size(), " hypotheses but a reference set of ",
          r.size(), " lines");
  auto chars = [](const std::string& line) {  // code points, whitespace removed
    std::vector<std::string> out;
    for (auto& c : split_chars(line))
      if (c != kSpaceUnit && c != "\t") out.push_back(c);
    return out;
  };
  const double factor = beta * beta;
  // per order: hyp n-grams, ref n-grams, matches, summed over the corpus
  std::vector<std::array<int64_t, 3>> stats(char_order, {0, 0, 0});
  auto f_of = [&](const std::vector<std::array<int64_t, 3>>& st) {
    double prec = 0, rec = 0;
    int eff = 0;
    for (const auto& [nh, nr, nm] : st)
      if (nh > 0 && nr > 0) {
        prec += static_cast<double>(nm) / static_cast<double>(nh);
        rec += static_cast<double>(nm) / static_cast<double>(nr);
        ++eff;
      }
    if (eff == 0) return 0.0;
    prec /= eff;
    rec /= eff;
    return prec + rec > 0 ? (1 + factor) * prec * rec / (factor * prec + rec) : 0.0;
  };
  for (size_t i = 0; i < hyps.size(); ++i) {
    auto h = chars(hyps[i]);
    std::vector<std::array<int64_t, 3>> best;
    double best_f = -1;
    for (const auto& refset : refs) {  // with several references, the best one per sentence
      auto r = chars(refset[i]);
      std::vector<std::array<int64_t, 3>> st(char_order, {0, 0, 0});
      for (int n = 1; n <= char_order; ++n) {
        NgramCounts hc = ngrams(h, n), rc = ngrams(r, n);
        int64_t nh = 0, nr = 0, nm = 0;
        for (const auto& [g, c] : hc) {
          nh += c;
          auto it = rc.find(g);
          if (it != rc.end()) nm += std::min(c, it->second);
        }
        for (const auto& [g, c] : rc) nr += c;
        st[n - 1] = {nh, nr, nm};
      }
      double f = f_of(st);
      if (f > best_f) {
        best_f = f;
        best = st;
      }
    }
    for (int n = 0; n < char_order; ++n)
      for (int k = 0; k < 3; ++k) stats[n][k] += best[n][k];
  }
  return {100.0 * f_of(stats)};
}

std::string ChrfScore::str() const {
  return "chrF2 = " + fmt("%.2f", score);
}

int64_t edit_distance(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<int64_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int64_t>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int64_t>(i);
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] =
          std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

double ErrorRate::percent() const {
  return length > 0 ? 100.0 * static_cast<double>(edits) / static_cast<double>(length) : 0.0;
}

std::string ErrorRate::str(const char* name) const {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s = %.2f (%lld/%lld)", name, percent(),
                static_cast<long long>(edits), static_cast<long long>(length));
  return buf;
}

namespace {

ErrorRate error_rate(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                     std::vector<std::string> (*units)(std::string_view)) {
  check(hyps.size() == refs.size(), "error rate: ", hyps.size(), " hypotheses for ", refs.size(),
        " references");
  ErrorRate e;
  for (size_t i = 0; i < refs.size(); ++i) {
    const std::vector<std::string> r = units(refs[i]);
    e.edits += edit_distance(units(hyps[i]), r);
    e.length += static_cast<int64_t>(r.size());
  }
  return e;
}

// code points of the words joined by single spaces
std::vector<std::string> characters(std::string_view line) {
  std::string joined;
  for (const std::string& w : split_words(line)) joined += (joined.empty() ? "" : " ") + w;
  std::vector<std::string> out = split_chars(joined);
  for (std::string& c : out)
    if (c == kSpaceUnit) c = " ";
  return out;
}

}  // namespace

ErrorRate word_error_rate(const std::vector<std::string>& hyps,
                          const std::vector<std::string>& refs) {
  return error_rate(hyps, refs, [](std::string_view l) { return split_words(l); });
}

ErrorRate char_error_rate(const std::vector<std::string>& hyps,
                          const std::vector<std::string>& refs) {
  return error_rate(hyps, refs, characters);
}

G2pScore g2p_error_rates(const std::map<std::string, std::string>& hyps,
                         const std::map<std::string, std::vector<std::string>>& refs) {
  G2pScore s;
  int64_t wrong = 0, errors = 0;
  for (const auto& [word, alts] : refs) {
    auto it = hyps.find(word);
    check(it != hyps.end(), "G2P scoring: no hypothesis for the reference word '", word, "'");
    auto h = split_words(it->second);
    bool right = false;
    int64_t best_d = -1, best_len = 0;
    for (const auto& alt : alts) {
      auto r = split_words(alt);
      int64_t d = edit_distance(h, r);
      right = right || d == 0;
      if (best_d < 0 || d < best_d) {
        best_d = d;
        best_len = static_cast<int64_t>(r.size());
      }
    }
    wrong += right ? 0 : 1;
    errors += best_d;
    s.phones += best_len;
    ++s.words;
  }
  s.wer = s.words ? 100.0 * static_cast<double>(wrong) / static_cast<double>(s.words) : 0;
  s.per = s.phones ? 100.0 * static_cast<double>(errors) / static_cast<double>(s.phones) : 0;
  return s;
}

std::string G2pScore::str() const {
  return "WER = " + fmt("%.2f", wer) + " PER = " + fmt("%.2f", per) +
         " (words = " + std::to_string(words) + " phones = " + std::to_string(phones) + ")";
}

AccuracyScore accuracy(const std::vector<int32_t>& refs, const std::vector<int32_t>& hyps) {
  check(refs.size() == hyps.size(), "accuracy: ", hyps.size(), " predictions for ", refs.size(),
        " references");
  AccuracyScore a;
  int32_t C = 0;
  for (size_t i = 0; i < refs.size(); ++i) {
    check(refs[i] >= 0 && hyps[i] >= 0, "accuracy: negative label on line ", i + 1);
    C = std::max({C, refs[i] + 1, hyps[i] + 1});
  }
  a.confusion.assign(static_cast<size_t>(C), std::vector<int64_t>(static_cast<size_t>(C), 0));
  int64_t right = 0;
  for (size_t i = 0; i < refs.size(); ++i) {
    ++a.confusion[static_cast<size_t>(refs[i])][static_cast<size_t>(hyps[i])];
    right += refs[i] == hyps[i];
  }
  a.n = static_cast<int64_t>(refs.size());
  a.accuracy = a.n > 0 ? 100.0 * static_cast<double>(right) / static_cast<double>(a.n) : 0;
  return a;
}

std::string AccuracyScore::str() const {
  auto cell = [](int64_t v, size_t width) {  // right-aligned
    std::string t = std::to_string(v);
    return std::string(width > t.size() ? width - t.size() : 0, ' ') + t;
  };
  int64_t right = 0;
  for (size_t c = 0; c < confusion.size(); ++c) right += confusion[c][c];
  std::string out = "acc = " + fmt("%.2f", accuracy) + " (" + std::to_string(right) + "/" +
                    std::to_string(n) + ")\nconfusion (rows: reference, columns: predicted)\n" +
                    std::string(5, ' ');
  for (size_t c = 0; c < confusion.size(); ++c) out += cell(static_cast<int64_t>(c), 7);
  for (size_t r = 0; r < confusion.size(); ++r) {
    out += '\n';
    out += cell(static_cast<int64_t>(r), 5);
    for (int64_t v : confusion[r]) out += cell(v, 7);
  }
  return out;
}

}  // namespace heed
