// The attention benchmark (workload and fields in the header).
// Leaves out: nothing of the peer's fields but "blas" (heed has one GEMM: oneDNN).
#include "heed/bench/attention_bench.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/autograd/ops.h"
#include "heed/bench/measure.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/random.h"
#include "heed/util/error.h"
#include "heed/version.h"

namespace heed {
namespace {

struct BenchShape {
  int64_t B, H, T, d;
};

std::vector<BenchShape> parse_shapes(const std::string& list) {
  std::vector<BenchShape> shapes;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    BenchShape s{};
    char x1 = 0, x2 = 0, x3 = 0, extra = 0;
    const int n = std::sscanf(item.c_str(), "%" SCNd64 "%c%" SCNd64 "%c%" SCNd64 "%c%" SCNd64 "%c",
                              &s.B, &x1, &s.H, &x2, &s.T, &x3, &s.d, &extra);
    check(n == 7 && x1 == 'x' && x2 == 'x' && x3 == 'x' && s.B > 0 && s.H > 0 && s.T > 0 && s.d > 0,
          "bench attention: bad shape '", item, "' (expected BxHxTxd, e.g. 1x8x1024x64)");
    shapes.push_back(s);
  }
  check(!shapes.empty(), "bench attention: no shapes in '", list, "'");
  return shapes;
}

Tensor random_input(const Shape& shape, Rng& rng) {
  Tensor t = Tensor::empty(shape);
  for (float& v : t.span()) v = rng.normal();
  return t;
}

// The peer's repeat policy: one warm-up call, a second timed one when the first took < 1 s,
// then max(min_reps, min(max_reps, budget / one call)) timed calls (at least 3 when slow).
template <class F>
std::vector<double> time_fn(F&& fn, const AttentionBenchOptions& o) {
  auto t0 = bench::Clock::now();
  fn();
  double one = bench::since(t0);
  if (one < 1.0) {
    t0 = bench::Clock::now();
    fn();
    one = bench::since(t0);
  }
  const int min_reps = one > 1.0 ? std::min(o.min_reps, 3) : o.min_reps;
  const int reps = std::max(min_reps, std::min(o.max_reps, static_cast<int>(o.budget / one)));
  return bench::timed(reps, 1e300, [&](int) { fn(); });
}

// Runs argv as a child process sharing stdout/stderr and waits for it; a failure is an error.
void run_child(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  check(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) == 0,
        "bench attention: cannot start ", args[0]);
  int status = 0;
  check(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "bench attention: the measurement ", args[6], " failed");
}

}  // namespace

void run_attention_bench(const AttentionBenchOptions& o, std::ostream& out) {
  if (o.child.empty()) {
    // every configuration in a child process: "/proc/self/exe --threads N bench attention ..."
    for (const BenchShape& s : parse_shapes(o.shapes))
      for (const char* mode : {"fwd", "fwdbwd"})
        for (const char* mask : {"none", "causal"}) {
          const std::string spec = std::to_string(s.B) + "x" + std::to_string(s.H) + "x" +
                                   std::to_string(s.T) + "x" + std::to_string(s.d) + "/" + mode +
                                   "/" + mask;
          out << std::flush;
          run_child({"/proc/self/exe", "--threads", std::to_string(threads()), "bench", "attention",
                     "--child", spec, "--budget", std::to_string(o.budget), "--tag", o.tag,
                     "--seed", std::to_string(o.seed)});
        }
    return;
  }
  const auto slash = o.child.find('/'), slash2 = o.child.rfind('/');
  check(slash != std::string::npos && slash2 > slash, "bench attention: bad --child ", o.child);
  const BenchShape s = parse_shapes(o.child.substr(0, slash)).front();
  const std::string mode = o.child.substr(slash + 1, slash2 - slash - 1),
                    mask = o.child.substr(slash2 + 1);
  check((mode == "fwd" || mode == "fwdbwd") && (mask == "none" || mask == "causal"),
        "bench attention: bad --child ", o.child);
  const bool backward = mode == "fwdbwd", causal = mask == "causal";
  Rng rng(o.seed);
  // [B, T, H*d]: heads side by side, as a projection writes them
  const Shape shape{s.B, s.T, s.H * s.d};
  const Tensor q = random_input(shape, rng), k = random_input(shape, rng),
               v = random_input(shape, rng), dout = random_input(shape, rng);
  const double fwd_flops = 4.0 * static_cast<double>(s.B * s.H) * s.T * s.T * s.d;
  const SdpaOptions opts{.heads = s.H, .causal = causal};
  Graph g(backward ? Mode::Train : Mode::Inference);
  const bool peak_ok = bench::reset_peak_rss();
  const double base = bench::rss_mb();
  const std::vector<double> times = time_fn(
      [&] {
        g.clear();
        if (!backward) {
          scaled_dot_product_attention(g.constant(q), g.constant(k), g.constant(v), opts);
          return;
        }
        Var y = scaled_dot_product_attention(g.variable(q), g.variable(k), g.variable(v), opts);
        g.backward(y, dout);
      },
      o);
  const double peak = bench::peak_rss_mb();
  const double med = bench::median(times), flops = (backward ? 3.0 : 1.0) * fwd_flops;
  nlohmann::json j = {
      {"bench", "attention"},
      {"impl", "heed fused (tiled, online softmax)"},
      {"B", s.B},
      {"H", s.H},
      {"T", s.T},
      {"d", s.d},
      {"mask", mask},
      {"mode", mode},
      {"threads", threads()},
      {"score_matrix_mb",
       bench::round_to(static_cast<double>(s.B * s.H * s.T * s.T * 4) / (1 << 20), 1)},
      {"reps", times.size()},
      {"median_ms", bench::round_to(med * 1e3, 4)},
      {"min_ms", bench::round_to(*std::min_element(times.begin(), times.end()) * 1e3, 4)},
      {"max_ms", bench::round_to(*std::max_element(times.begin(), times.end()) * 1e3, 4)},
      {"gflops", bench::round_to(flops / med / 1e9, 2)},
      {"flops_counted", flops},
      {"rss_base_mb", bench::round_to(base, 1)},
      {"peak_delta_mb",
       peak_ok ? nlohmann::json(bench::round_to(peak - base, 1)) : nlohmann::json(nullptr)},
      {"heed", HEED_VERSION},
      {"tag", o.tag}};
  bench::write_line(out, j);
}

}  // namespace heed
