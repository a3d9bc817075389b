// Timing and memory measurement for the benchmarks (see the header).
// Leaves out: hardware counters.
#include "heed/bench/measure.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <ostream>
#include <string>

namespace heed::bench {
namespace {

// A "Key:   123 kB" field of /proc/self/status, in MB (-1 when absent).
double status_mb(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string name;
  double kb = -1;
  while (f >> name) {
    if (name == key + ":") {
      f >> kb;
      break;
    }
    f.ignore(1 << 20, '\n');
  }
  return kb < 0 ? -1 : kb / 1024.0;
}

}  // namespace

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

double round_to(double x, int digits) {
  double p = std::pow(10.0, digits);
  return std::round(x * p) / p;
}

double maxrss_mb() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return std::round(static_cast<double>(r.ru_maxrss) / 1024.0 * 10) / 10;
}

bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

double rss_mb() {
  return status_mb("VmRSS");
}

double peak_rss_mb() {
  return status_mb("VmHWM");
}

namespace {
nlohmann::json& line_fields() {
  static nlohmann::json fields = nlohmann::json::object();
  return fields;
}
}  // namespace

void set_line_fields(nlohmann::json fields) {
  line_fields() = std::move(fields);
}

void write_line(std::ostream& out, nlohmann::json j) {
  for (const auto& [key, value] : line_fields().items())
    if (!j.contains(key)) j[key] = value;
  out << j.dump() << "\n" << std::flush;
}

}  // namespace heed::bench
