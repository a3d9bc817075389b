// The server's counters for Prometheus (GET /metrics, text exposition format 0.0.4): requests
// and errors by route and status, a latency histogram, batch sizes, queue depth.
// Leaves out: a general metrics library (a handful of fixed series, one mutex).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace heed::serve {

// Cumulative buckets as Prometheus has them: counts of observations <= each upper bound.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double x);
  // "name_bucket{le=...} n" lines, then _sum and _count
  void write(std::string& out, const std::string& name) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // [bounds + 1]: per bucket, the last +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();
  // one answered request: its route ("/translate", ...; others "other"), status and seconds
  void request(const std::string& route, int status, double seconds);
  void batch(int64_t sentences);    // one batch decoded, of this many sentences
  void queue_depth(int64_t delta);  // sentences waiting for a batch, +/-
  std::string text() const;         // the exposition

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // (route, status) -> count
  Histogram latency_, batches_;
  int64_t queue_ = 0;
};

}  // namespace heed::serve
