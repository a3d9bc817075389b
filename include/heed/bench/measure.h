// Measuring for the `heed bench` workloads: wall-clock timing of repeated items, the median,
// rounding for printing, and resident memory (the peak, and the peak since a reset, as the
// PyTorch peers measure it through /proc/self/clear_refs).
// Leaves out: the workloads themselves (one file each beside this one).
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/kernels/random.h"

namespace heed::bench {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t);  // seconds

double median(std::vector<double> v);
double sum(const std::vector<double>& v);
double round_to(double x, int digits);

// Runs item(i) for i = 0, 1, ... until `count` items or `budget` seconds (at least one item);
// returns each item's seconds.
template <class F>
std::vector<double> timed(int count, double budget, F item) {
  std::vector<double> times;
  auto t_start = Clock::now();
  for (int i = 0; i < count; ++i) {
    auto t0 = Clock::now();
    item(i);
    times.push_back(since(t0));
    if (since(t_start) > budget) break;
  }
  return times;
}

// A draw uniform in [lo, hi], for the synthetic batches of the workloads.
inline int64_t uniform_in(Rng& rng, int64_t lo, int64_t hi) {
  return lo + rng.below(hi - lo + 1);
}

double maxrss_mb();  // peak resident memory of the process so far (getrusage)
// Resets the kernel's peak-RSS mark (VmHWM) to the current RSS; false where unsupported.
bool reset_peak_rss();
double rss_mb();       // VmRSS now
double peak_rss_mb();  // VmHWM: the peak since the last reset

// The fields every printed line carries (machine.h's machine_fields: the CPU and its measured
// GEMM rates), set once by the command line before a workload runs.
void set_line_fields(nlohmann::json fields);
// Writes j as one JSON line with those fields added (j's own keep their values), flushed.
void write_line(std::ostream& out, nlohmann::json j);

}  // namespace heed::bench
