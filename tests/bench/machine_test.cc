// What every `heed bench` line says of its machine: the first processor's entry of
// /proc/cpuinfo, and GEMM rates that are rates (positive, and below any CPU's ceiling).
#include <gtest/gtest.h>

#include <sstream>

#include "heed/bench/machine.h"
#include "heed/bench/measure.h"

namespace heed::bench {
namespace {

TEST(Machine, ReadsTheFirstProcessorsEntry) {
  const CpuId id = parse_cpuinfo(
      "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
      "model name\t: AMD EPYC 9R14 96-Core Processor\nstepping\t: 1\n\n"
      "processor\t: 1\ncpu family\t: 6\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R)\n");
  EXPECT_EQ(id.name, "AMD EPYC 9R14 96-Core Processor");
  EXPECT_EQ(id.family, 25);
  EXPECT_EQ(id.model, 17);  // not "model name", not the second entry
}

TEST(Machine, MissingOrOddFieldsKeepTheDefaults) {
  const CpuId none = parse_cpuinfo("processor : 0\nBogoMIPS : 50.00\n");
  EXPECT_EQ(none.name, "unknown");
  EXPECT_EQ(none.family, -1);
  EXPECT_EQ(parse_cpuinfo("cpu family : x25\n").family, -1);
  EXPECT_EQ(parse_cpuinfo("").model, -1);
}

TEST(Machine, MeasuresRatesAndStampsEveryLine) {
  const MachineInfo m = measure_machine(0.05);
  EXPECT_GT(m.sgemm_gflops, 0.5);
  EXPECT_LT(m.sgemm_gflops, 1e5);
  EXPECT_GE(m.bf16_gflops, 0);
  set_line_fields(machine_fields(m));
  std::ostringstream out;
  write_line(out, {{"bench", "x"}, {"threads", 7}});
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["bench"], "x");
  EXPECT_EQ(j["threads"], 7);  // a line's own field wins
  EXPECT_EQ(j["sgemm_gflops"], round_to(m.sgemm_gflops, 1));
  EXPECT_EQ(j["cpu_family"], m.cpu.family);
  set_line_fields(nlohmann::json::object());
}

}  // namespace
}  // namespace heed::bench
