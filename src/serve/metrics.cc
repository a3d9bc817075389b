// Prometheus text exposition of the server's counters (see the header).
// Leaves out: labels beyond route and status.
#include "heed/serve/metrics.h"

#include <algorithm>
#include <cstdio>

namespace heed::serve {
namespace {
std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}
}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double x) {
  const auto i = std::lower_bound(bounds_.begin(), bounds_.end(), x) - bounds_.begin();
  ++counts_[static_cast<size_t>(i)];
  sum_ += x;
  ++count_;
}

void Histogram::write(std::string& out, const std::string& name) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += name + "_bucket{le=\"" + (i < bounds_.size() ? number(bounds_[i]) : "+Inf") + "\"} " +
           std::to_string(cumulative) + "\n";
  }
  out += name + "_sum " + number(sum_) + "\n" + name + "_count " + std::to_string(count_) + "\n";
}

Metrics::Metrics()
    : latency_({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}),
      batches_({1, 2, 4, 8, 16, 32, 64, 128, 256}) {}

void Metrics::request(const std::string& route, int status, double seconds) {
  const std::lock_guard lock(mu_);
  ++requests_[{route, status}];
  if (seconds >= 0) latency_.observe(seconds);
}

void Metrics::batch(int64_t sentences) {
  const std::lock_guard lock(mu_);
  batches_.observe(static_cast<double>(sentences));
}

void Metrics::queue_depth(int64_t delta) {
  const std::lock_guard lock(mu_);
  queue_ += delta;
}

std::string Metrics::text() const {
  const std::lock_guard lock(mu_);
  std::string out =
      "# HELP heed_requests_total Requests answered, by route and HTTP status.\n"
      "# TYPE heed_requests_total counter\n";
  uint64_t errors = 0;
  for (const auto& [key, n] : requests_) {
    out += "heed_requests_total{route=\"" + key.first + "\",code=\"" + std::to_string(key.second) +
           "\"} " + std::to_string(n) + "\n";
    if (key.second >= 400) errors += n;
  }
  out +=
      "# HELP heed_request_errors_total Requests answered with a 4xx or 5xx status.\n"
      "# TYPE heed_request_errors_total counter\n"
      "heed_request_errors_total " +
      std::to_string(errors) +
      "\n"
      "# HELP heed_request_duration_seconds Time from a request's routing to its answer.\n"
      "# TYPE heed_request_duration_seconds histogram\n";
  latency_.write(out, "heed_request_duration_seconds");
  out +=
      "# HELP heed_batch_sentences Sentences per decoded batch (requests batched together).\n"
      "# TYPE heed_batch_sentences histogram\n";
  batches_.write(out, "heed_batch_sentences");
  out +=
      "# HELP heed_queue_sentences Sentences waiting for a batch.\n"
      "# TYPE heed_queue_sentences gauge\n"
      "heed_queue_sentences " +
      std::to_string(queue_) + "\n";
  return out;
}

}  // namespace heed::serve
