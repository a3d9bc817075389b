// What a speed figure needs to be read on another machine: the CPU (its model name and the
// family/model numbers of /proc/cpuinfo), the threads used, and the GEMM rate this process
// measured on them just now (fp32 sgemm and, where the CPU multiplies bf16 natively, the bf16
// matmul heed trains with) — the ceiling "model FLOPs utilisation" is a fraction of. Every
// `heed bench` line carries these fields (bench::write_line).
// Leaves out: hardware counters and frequency readings (the GEMM rate stands for both).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace heed::bench {

struct CpuId {
  std::string name = "unknown";  // "model name"
  int family = -1, model = -1;   // "cpu family", "model"
};

// The first processor's entry of a /proc/cpuinfo text (fields absent: the defaults).
CpuId parse_cpuinfo(std::string_view text);
CpuId read_cpu();  // of this machine (/proc/cpuinfo)

struct MachineInfo {
  CpuId cpu;
  int threads = 1;
  double sgemm_gflops = 0;  // fp32, the best of a few 1024^3 products (2048^3 above 4 threads)
  double bf16_gflops = 0;   // bf16 inputs, fp32 sums; 0 where the CPU has no native bf16
};

// Reads the CPU and measures the GEMM rates on heed's threads (about `seconds` in all).
MachineInfo measure_machine(double seconds = 0.6);

// The fields every line gets: cpu, cpu_family, cpu_model, threads, sgemm_gflops, bf16_gflops.
nlohmann::json machine_fields(const MachineInfo& m);

}  // namespace heed::bench
