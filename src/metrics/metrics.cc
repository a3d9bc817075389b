// BLEU, chrF and G2P error rates (definitions in the header).
// Leaves out: sentence-level BLEU smoothing variants other than sacreBLEU's "exp"; TER.
#include "heed/metrics/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "heed/data/text.h"
#include "heed/util/error.h"
#include "heed/version.h"

namespace heed {
namespace {

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

std::string metric_version() {
  return std::string("version:heed-") + HEED_VERSION;
}

BleuScore corpus_bleu(const std::vector<std::string>& hyps,
                      const std::vector<std::vector<std::string>>& refs, const BleuOptions& o) {
  check(!refs.empty(), "BLEU needs at least one reference set");
  for (const auto& r : refs)
    check(r.size() == hyps.size(), "BLEU: ", hyps.size(), " hypotheses but a reference set of ",
          r.size(), " lines");
  auto prep = [&](const std::string& line) {
    return o.sacrebleu ? bleu_tokens(line, o.tokenize, o.lowercase)
                       : split_words(o.lowercase ? unicode_lower(line) : line);
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
  // BP = min(1, exp(1 - r/c)); BLEU = BP · exp((1/4) Σ_n log p_n), p_n in percent.
  // sacreBLEU's "exp" smoothing: the k-th order without a match has p_n = 100 / (2^k total_n).
  s.ratio = s.ref_len ? static_cast<double>(s.hyp_len) / static_cast<double>(s.ref_len) : 0;
  s.bp = s.hyp_len >= s.ref_len ? 1.0
         : s.hyp_len > 0
             ? std::exp(1.0 - static_cast<double>(s.ref_len) / static_cast<double>(s.hyp_len))
             : 0.0;
  const bool any_match = std::any_of(match.begin(), match.end(), [](int64_t m) { return m > 0; });
  if (any_match) {  // else 0, every precision 0 (as sacreBLEU stops early)
    double smooth = 1, log_sum = 0;
    bool zero = false;
    int orders = 4;  // the orders averaged (effective order: those with n-grams)
    for (int n = 0; n < 4; ++n) {
      if (total[n] == 0) {  // no n-grams of this order: BLEU is 0, but for the effective order
        if (o.effective_order)
          orders = n;
        else
          zero = true;
        break;
      }
      if (match[n] == 0 && o.sacrebleu) {
        smooth *= 2;
        s.precisions[n] = 100.0 / (smooth * static_cast<double>(total[n]));
      } else {
        s.precisions[n] = 100.0 * static_cast<double>(match[n]) / static_cast<double>(total[n]);
      }
      if (s.precisions[n] <= 0)
        zero = true;
      else
        log_sum += std::log(s.precisions[n]);
    }
    s.score = zero || orders == 0 ? 0.0 : s.bp * std::exp(log_sum / orders);
  }
  if (o.sacrebleu) {
    s.signature = "nrefs:" + std::to_string(refs.size()) +
                  "|case:" + (o.lowercase ? "lc" : "mixed") +
                  "|eff:" + (o.effective_order ? "yes" : "no") +
                  "|tok:" + std::string(name_of(o.tokenize)) + "|smooth:exp|" + metric_version();
  }
  return s;
}

std::string BleuScore::verbose() const {
  std::string out;
  for (int n = 0; n < 4; ++n) {
    if (n) out += '/';
    out += fmt("%.1f", precisions[n]);
  }
  return out + " (BP = " + fmt("%.3f", bp) + " ratio = " + fmt("%.3f", ratio) +
         " hyp_len = " + std::to_string(hyp_len) + " ref_len = " + std::to_string(ref_len) + ")";
}

std::string BleuScore::str(int width) const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", width, score);
  return (signature.empty() ? "BLEU" : "BLEU|" + signature) + " = " + buf + " " + verbose();
}

namespace {

// sacreBLEU's chrF++ words: split at whitespace; a word's last character, or else its first,
// split off when it is ASCII punctuation ("(hi)" gives "(hi" and ")", as sacreBLEU does).
std::vector<std::string> chrf_words(std::string_view line) {
  static constexpr std::string_view kPuncts = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  std::vector<std::string> out;
  for (std::string& w : unicode_split(line)) {
    const bool several = split_chars(w).size() > 1;
    if (several && kPuncts.find(w.back()) != std::string_view::npos) {
      out.push_back(w.substr(0, w.size() - 1));
      out.push_back(w.substr(w.size() - 1));
    } else if (several && kPuncts.find(w.front()) != std::string_view::npos) {
      out.push_back(w.substr(0, 1));
      out.push_back(w.substr(1));
    } else {
      out.push_back(std::move(w));
    }
  }
  return out;
}

// A line's n-gram counts, orders 1..char_order of characters then 1..word_order of words.
std::vector<NgramCounts> chrf_ngrams(const std::string& line, const ChrfOptions& o) {
  std::vector<std::string> chars;  // code points, whitespace dropped unless kept
  if (o.whitespace) {
    for (std::string& c : split_chars(line)) chars.push_back(c == kSpaceUnit ? " " : std::move(c));
  } else {
    for (const std::string& w : unicode_split(line))
      for (std::string& c : split_chars(w)) chars.push_back(std::move(c));
  }
  std::vector<NgramCounts> out;
  for (int n = 1; n <= o.char_order; ++n) {
    NgramCounts c;
    for (size_t i = 0; i + n <= chars.size(); ++i) {
      std::string g;
      for (int k = 0; k < n; ++k) g += chars[i + k];
      ++c[g];
    }
    out.push_back(std::move(c));
  }
  if (o.word_order > 0) {
    const std::vector<std::string> words = chrf_words(line);
    for (int n = 1; n <= o.word_order; ++n) out.push_back(ngrams(words, n));
  }
  return out;
}

// {hyp n-grams, ref n-grams, matches} per order
using ChrfStats = std::vector<std::array<int64_t, 3>>;

// chrF = (1 + β²) P R / (β² P + R), P and R averaged over the orders both sides have; with
// eps smoothing, the mean over all orders of each order's F, an absent count's ratio 1e-16.
double chrf_of(const ChrfStats& st, const ChrfOptions& o) {
  const double eps = 1e-16, factor = static_cast<double>(o.beta) * o.beta;
  double eps_sum = 0, avg_p = 0, avg_r = 0;
  int effective = 0;
  for (const auto& [nh, nr, nm] : st) {
    const double p = nh > 0 ? static_cast<double>(nm) / static_cast<double>(nh) : eps;
    const double r = nr > 0 ? static_cast<double>(nm) / static_cast<double>(nr) : eps;
    const double denom = factor * p + r;
    eps_sum += denom > 0 ? (1 + factor) * p * r / denom : eps;
    if (nh > 0 && nr > 0) {
      avg_p += p;
      avg_r += r;
      ++effective;
    }
  }
  if (o.eps_smoothing) return 100 * eps_sum / static_cast<double>(st.size());
  if (effective == 0) return 0.0;
  avg_p /= effective;
  avg_r /= effective;
  return avg_p + avg_r > 0 ? 100 * ((1 + factor) * avg_p * avg_r) / (factor * avg_p + avg_r) : 0.0;
}

}  // namespace

ChrfScore corpus_chrf(const std::vector<std::string>& hyps,
                      const std::vector<std::vector<std::string>>& refs, const ChrfOptions& o) {
  check(!refs.empty(), "chrF needs at least one reference set");
  check(o.char_order >= 0 && o.word_order >= 0 && o.char_order + o.word_order > 0 && o.beta > 0,
        "chrF: the character and word orders must be >= 0 and not both 0, beta > 0");
  for (const auto& r : refs)
    check(r.size() == hyps.size(), "chrF: ", hyps.size(), " hypotheses but a reference set of ",
          r.size(), " lines");
  auto prep = [&](const std::string& line) { return o.lowercase ? unicode_lower(line) : line; };
  const size_t orders = static_cast<size_t>(o.char_order) + static_cast<size_t>(o.word_order);
  ChrfStats total(orders, {0, 0, 0});
  for (size_t i = 0; i < hyps.size(); ++i) {
    const std::vector<NgramCounts> h = chrf_ngrams(prep(hyps[i]), o);
    ChrfStats best;
    double best_f = -1;
    for (const auto& refset : refs) {  // the best reference of each sentence, first on ties
      const std::vector<NgramCounts> r = chrf_ngrams(prep(refset[i]), o);
      ChrfStats st(orders, {0, 0, 0});
      for (size_t n = 0; n < orders; ++n) {
        int64_t nh = 0, nr = 0, nm = 0;
        for (const auto& [g, c] : h[n]) {
          nh += c;
          auto it = r[n].find(g);
          if (it != r[n].end()) nm += std::min(c, it->second);
        }
        for (const auto& [g, c] : r[n]) nr += c;
        st[n] = {r[n].empty() ? 0 : nh, nr, nm};  // no reference n-grams: the order not counted
      }
      const double f = chrf_of(st, o);
      if (f > best_f) {
        best_f = f;
        best = st;
      }
    }
    for (size_t n = 0; n < orders; ++n)
      for (int k = 0; k < 3; ++k) total[n][k] += best[n][k];
  }
  ChrfScore s;
  s.score = chrf_of(total, o);
  s.name = "chrF" + std::to_string(o.beta) + std::string(static_cast<size_t>(o.word_order), '+');
  s.signature = "nrefs:" + std::to_string(refs.size()) + "|case:" + (o.lowercase ? "lc" : "mixed") +
                "|eff:" + (o.eps_smoothing ? "no" : "yes") + "|nc:" + std::to_string(o.char_order) +
                "|nw:" + std::to_string(o.word_order) + "|space:" + (o.whitespace ? "yes" : "no") +
                "|" + metric_version();
  return s;
}

std::string ChrfScore::str(int width) const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", width, score);
  return (signature.empty() ? name : name + "|" + signature) + " = " + buf;
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
