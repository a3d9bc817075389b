// Latency of streaming recognition (see the header).
#include "heed/metrics/word_delay.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "heed/data/transcript.h"
#include "heed/metrics/latency.h"
#include "heed/util/error.h"

namespace heed {

namespace {

// The normalised words (empty ones dropped) and their indices in `words`.
std::vector<std::pair<std::string, size_t>> normalised(const std::vector<TimedWord>& words) {
  std::vector<std::pair<std::string, size_t>> out;
  for (size_t i = 0; i < words.size(); ++i) {
    std::istringstream parts(normalise_transcript(words[i].word));
    std::string w;
    while (parts >> w) out.emplace_back(w, i);
  }
  return out;
}

// The pairs (ref index, hyp index) of equal words on a minimum-edit alignment.
std::vector<std::pair<size_t, size_t>> hits(const std::vector<std::string>& r,
                                            const std::vector<std::string>& h) {
  const size_t R = r.size(), H = h.size();
  std::vector<std::vector<int32_t>> d(R + 1, std::vector<int32_t>(H + 1, 0));
  for (size_t i = 0; i <= R; ++i) d[i][0] = static_cast<int32_t>(i);
  for (size_t j = 0; j <= H; ++j) d[0][j] = static_cast<int32_t>(j);
  for (size_t i = 1; i <= R; ++i)
    for (size_t j = 1; j <= H; ++j)
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (r[i - 1] == h[j - 1] ? 0 : 1)});
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = R, j = H; i > 0 && j > 0;) {
    if (d[i][j] == d[i - 1][j - 1] + (r[i - 1] == h[j - 1] ? 0 : 1)) {
      if (r[i - 1] == h[j - 1]) out.emplace_back(i - 1, j - 1);
      --i;
      --j;
    } else if (d[i][j] == d[i - 1][j] + 1) {
      --i;
    } else {
      --j;
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

double quantile(std::vector<double> v, double q) {  // linear interpolation, as numpy's default
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(at));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

}  // namespace

WordDelayScore word_delays(const std::vector<TimedUtterance>& refs,
                           const std::vector<TimedUtterance>& hyps) {
  check(refs.size() == hyps.size(), "word delays: ", hyps.size(), " streamed utterances for ",
        refs.size(), " references");
  WordDelayScore s;
  std::vector<double> delays;
  std::vector<Delays> lags;
  std::vector<int64_t> ref_lens;
  for (size_t u = 0; u < refs.size(); ++u) {
    const auto r = normalised(refs[u].words), h = normalised(hyps[u].words);
    s.ref_words += static_cast<int64_t>(r.size());
    std::vector<std::string> rw, hw;
    for (const auto& [w, i] : r) rw.push_back(w);
    for (const auto& [w, i] : h) hw.push_back(w);
    for (const auto& [i, j] : hits(rw, hw))
      delays.push_back(hyps[u].words[h[j].second].end - refs[u].words[r[i].second].end);
    if (h.empty() || r.empty()) continue;
    // AL over the output words, the source in ms (metrics/latency.h)
    Delays d;
    d.src_len = std::max<int64_t>(1, static_cast<int64_t>(std::llround(refs[u].seconds * 1000)));
    int64_t last = 0;
    for (const auto& [w, j] : h) {
      const auto read = static_cast<int64_t>(std::llround(hyps[u].words[j].read * 1000));
      last = std::max(last, std::min(d.src_len, read));
      d.delays.push_back(last);
    }
    lags.push_back(std::move(d));
    ref_lens.push_back(static_cast<int64_t>(rw.size()));
  }
  s.utterances = static_cast<int64_t>(refs.size());
  s.recognised = static_cast<int64_t>(delays.size());
  if (!delays.empty()) {
    double sum = 0;
    for (double x : delays) sum += x;
    s.mean = sum / static_cast<double>(delays.size());
    s.p50 = quantile(delays, 0.5);
    s.p90 = quantile(delays, 0.9);
  }
  if (!lags.empty()) s.al_ms = corpus_latency(lags, ref_lens).al;
  return s;
}

std::string WordDelayScore::str() const {
  std::ostringstream o;
  o.precision(3);
  o << std::fixed << "word delay mean " << mean << " s, p50 " << p50 << " s, p90 " << p90
    << " s over " << recognised << " recognised words of " << ref_words << "; AL "
    << std::setprecision(0) << al_ms << " ms (" << utterances << " utterances)";
  return o.str();
}

namespace {

template <class Each>
void each_json_line(const std::string& path, Each each) {
  std::ifstream in(path);
  if (!in) throw FileError(path, errno, "cannot open");
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(n);
    try {
      each(nlohmann::json::parse(line), where);
    } catch (const nlohmann::json::exception& e) {
      fail(where, ": ", e.what());
    }
  }
}

}  // namespace

std::vector<TimedUtterance> read_word_timings(const std::string& path) {
  std::vector<TimedUtterance> out;
  each_json_line(path, [&](const nlohmann::json& j, const std::string& where) {
    TimedUtterance u;
    u.id = j.at("id").get<std::string>();
    u.seconds = j.at("seconds").get<double>();
    check(std::isfinite(u.seconds) && u.seconds > 0, where, ": a duration of ", u.seconds, " s");
    for (const auto& w : j.at("words"))
      u.words.push_back({w.at("word").get<std::string>(), w.at("end").get<double>(), 0});
    out.push_back(std::move(u));
  });
  check(!out.empty(), path, ": no utterance");
  return out;
}

std::vector<TimedUtterance> read_stream_words(const std::string& path) {
  std::vector<TimedUtterance> out;
  each_json_line(path, [&](const nlohmann::json& j, const std::string& where) {
    const std::string type = j.at("type").get<std::string>();
    check(type == "final" || type == "partial", where, ": a result of type \"", type, "\"");
    const std::string id = j.at("id").get<std::string>();
    if (out.empty() || out.back().id != id) {
      TimedUtterance u;
      u.id = id;
      out.push_back(std::move(u));
    }
    if (type != "final") return;
    for (const auto& w : j.at("words"))
      out.back().words.push_back({w.at("word").get<std::string>(), w.at("emitted").get<double>(),
                                  w.value("read", w.at("emitted").get<double>())});
  });
  return out;
}

bool is_stream_output(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return false;
  try {
    const nlohmann::json j = nlohmann::json::parse(line);
    return j.is_object() && j.contains("type") && j.contains("segment");
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

}  // namespace heed
