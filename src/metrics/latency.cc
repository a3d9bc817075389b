// Latency metrics of online decoding (definitions in the header).
#include "heed/metrics/latency.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <istream>

#include <nlohmann/json.hpp>

#include "heed/data/text.h"
#include "heed/util/error.h"
#include "heed/util/json.h"

namespace heed {
namespace {

// AL over d with the rate gamma = tgt_len / |X|
double average_lagging(const Delays& d, double tgt_len) {
  const auto X = static_cast<double>(d.src_len);
  const double lag_per_token = X / tgt_len;  // 1 / gamma
  double sum = 0;
  int64_t tau = 0;
  for (size_t i = 0; i < d.delays.size(); ++i) {
    sum += static_cast<double>(d.delays[i]) - static_cast<double>(i) * lag_per_token;
    tau = static_cast<int64_t>(i) + 1;
    if (d.delays[i] >= d.src_len) break;  // the whole source read: later tokens do not lag
  }
  return sum / static_cast<double>(tau);
}

}  // namespace

SentenceLatency sentence_latency(const Delays& d, std::optional<int64_t> ref_len) {
  const auto Y = static_cast<int64_t>(d.delays.size());
  check(d.src_len >= 1 && Y >= 1, "latency: a sentence needs a source and an output token");
  const auto X = static_cast<double>(d.src_len), Yd = static_cast<double>(Y);
  SentenceLatency s;
  // AP = sum_i d_i / (|X| |Y|)
  double total = 0;
  for (int64_t v : d.delays) total += static_cast<double>(v);
  s.ap = total / (X * Yd);
  s.al = average_lagging(d, Yd);
  // DAL: d'_i = max(d_i, d'_{i-1} + 1 / gamma); mean of d'_i - (i - 1) / gamma
  const double step = X / Yd;
  double prev = 0, dal = 0;
  for (int64_t i = 0; i < Y; ++i) {
    const auto di = static_cast<double>(d.delays[i]);
    prev = i == 0 ? di : std::max(di, prev + step);
    dal += prev - static_cast<double>(i) * step;
  }
  s.dal = dal / Yd;
  if (ref_len)
    s.laal = average_lagging(d, static_cast<double>(std::max(Y, std::max<int64_t>(*ref_len, 1))));
  return s;
}

LatencyScore corpus_latency(const std::vector<Delays>& sentences,
                            const std::vector<int64_t>& ref_lens) {
  check(ref_lens.empty() || ref_lens.size() == sentences.size(), "latency: ", ref_lens.size(),
        " reference lengths for ", sentences.size(), " sentences");
  LatencyScore c;
  double laal = 0;
  for (size_t i = 0; i < sentences.size(); ++i) {
    if (sentences[i].delays.empty()) {
      ++c.empty;
      continue;
    }
    const SentenceLatency s = sentence_latency(
        sentences[i], ref_lens.empty() ? std::nullopt : std::optional<int64_t>(ref_lens[i]));
    c.ap += s.ap;
    c.al += s.al;
    c.dal += s.dal;
    if (s.laal) laal += *s.laal;
    ++c.sentences;
  }
  if (c.sentences > 0) {
    const auto n = static_cast<double>(c.sentences);
    c.ap /= n;
    c.al /= n;
    c.dal /= n;
    if (!ref_lens.empty()) c.laal = laal / n;
  }
  return c;
}

std::vector<Delays> read_delays(std::istream& in, const std::string& name) {
  std::vector<Delays> out;
  const std::vector<std::string> lines = read_lines(in, name);  // UTF-8 and NUL checked
  for (size_t n = 1; n <= lines.size(); ++n) {
    const std::string& line = lines[n - 1];
    const std::string where = name + ":" + std::to_string(n);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      fail(where, ": not a JSON object (", e.what(), ")");
    }
    check(j.is_object() && j.contains("src_len") && j.contains("delays") && j.contains("out") &&
              j["delays"].is_array() && j["out"].is_array(),
          where, ": expected {\"src_len\": n, \"out\": [...], \"delays\": [...]}");
    Delays d;
    d.src_len = json_integer<int64_t>(j, "src_len", where);
    // a blank input line has no source and no output (an empty translation)
    check(d.src_len >= 1 || (d.src_len == 0 && j["out"].empty()), where, ": \"src_len\" is ",
          d.src_len, " (at least 1 source token, or 0 with no output: a blank line)");
    check(j["delays"].size() == j["out"].size(), where, ": ", j["delays"].size(), " delays for ",
          j["out"].size(), " output tokens (one each, EOS excluded)");
    for (const nlohmann::json& v : j["delays"]) {
      check(v.is_number_integer(), where, ": a delay is ", v.dump(), ", not an integer");
      const auto x = v.get<int64_t>();
      check(x >= 0 && x <= d.src_len, where, ": delay ", x, " outside 0..", d.src_len,
            " (the source tokens read)");
      // (check's arguments are all evaluated: the previous delay read only when there is one)
      const int64_t previous = d.delays.empty() ? 0 : d.delays.back();
      check(x >= previous, where, ": delays go down (", previous, " then ", x,
            "): a token cannot be written after fewer reads");
      d.delays.push_back(x);
    }
    for (const nlohmann::json& unit : j["out"]) {
      check(unit.is_string(), where, ": an output unit is ", unit.dump(), ", not a string");
      d.out.push_back(unit.get<std::string>());
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<Delays> read_delays(const std::string& path) {
  std::ifstream in(path);
  check(in.good(), path, ": cannot open");
  return read_delays(in, path);
}

std::string LatencyScore::str() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "AL = %.2f AP = %.3f DAL = %.2f", al, ap, dal);
  std::string s = buf;
  if (laal) {
    std::snprintf(buf, sizeof buf, " LAAL = %.2f", *laal);
    s += buf;
  }
  std::snprintf(buf, sizeof buf, " (sentences = %lld", static_cast<long long>(sentences));
  s += buf;
  if (empty > 0) {
    std::snprintf(buf, sizeof buf, ", %lld empty outputs left out", static_cast<long long>(empty));
    s += buf;
  }
  return s + ")";
}

}  // namespace heed
