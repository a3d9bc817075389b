// The machine's identity and GEMM rates (see the header).
// Leaves out: other CPUs than the first entry (a machine of one CPU model is assumed).
#include "heed/bench/machine.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "heed/bench/measure.h"
#include "heed/kernels/bf16.h"
#include "heed/kernels/gemm.h"
#include "heed/kernels/parallel.h"

namespace heed::bench {
namespace {

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

int to_int(std::string_view s) {
  int v = 0;
  bool any = false;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
    any = true;
  }
  return any ? v : -1;
}

// The best rate of `product` (2 n^3 operations a call) over repeats filling `seconds`.
template <class F>
double best_gflops(int64_t n, double seconds, F product) {
  product();  // warm-up: oneDNN's JIT, first touch of the buffers
  double best = 0;
  for (double t : timed(50, seconds, [&](int) { product(); }))
    best = std::max(best, 2.0 * static_cast<double>(n * n * n) / t / 1e9);
  return best;
}

}  // namespace

CpuId parse_cpuinfo(std::string_view text) {
  CpuId id;
  bool name = false, family = false, model = false;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (trim(line).empty() && (name || family || model)) break;  // the end of the first entry
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "model name" && !name) {
      id.name = std::string(value);
      name = true;
    } else if (key == "cpu family" && !family) {
      id.family = to_int(value);
      family = true;
    } else if (key == "model" && !model) {
      id.model = to_int(value);
      model = true;
    }
  }
  return id;
}

CpuId read_cpu() {
  std::ifstream f("/proc/cpuinfo");
  std::stringstream text;
  text << f.rdbuf();
  return parse_cpuinfo(text.str());
}

MachineInfo measure_machine(double seconds) {
  MachineInfo m;
  m.cpu = read_cpu();
  m.threads = threads();
  const int64_t n = m.threads > 4 ? 2048 : 1024;
  const double each = kernels::bf16_native() ? seconds / 2 : seconds;
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  m.sgemm_gflops = best_gflops(n, each, [&] {
    kernels::gemm(false, false, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
  });
  if (kernels::bf16_native()) {
    std::vector<kernels::bf16> ha(n * n, kernels::to_bf16(0.5f)),
        hb(n * n, kernels::to_bf16(0.25f));
    m.bf16_gflops = best_gflops(n, each, [&] {
      kernels::gemm_bf16(false, false, n, n, n, ha.data(), n, hb.data(), n, 0.f, c.data(), n);
    });
  }
  return m;
}

nlohmann::json machine_fields(const MachineInfo& m) {
  return {{"cpu", m.cpu.name},
          {"cpu_family", m.cpu.family},
          {"cpu_model", m.cpu.model},
          {"threads", m.threads},
          {"sgemm_gflops", round_to(m.sgemm_gflops, 1)},
          {"bf16_gflops", round_to(m.bf16_gflops, 1)}};
}

}  // namespace heed::bench
