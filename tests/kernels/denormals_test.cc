// Denormals flushed to zero: a thread whose floating-point mode is cleared keeps a denormal
// product; after flush_denormals() it and every member of its OpenMP team read and write them
// as 0; a Graph built on a thread sets the mode there.
#include <gtest/gtest.h>

#include <omp.h>

#include <thread>
#include <vector>

#include "heed/autograd/graph.h"
#include "heed/kernels/denormals.h"

#if defined(__x86_64__) || defined(__i386__)
#include <pmmintrin.h>

namespace heed {
namespace {

void keep_denormals() {
  _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_OFF);
  _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_OFF);
}

// 1e-39 (a denormal) times 0.5: 5e-40 where denormals are kept, 0 where they are flushed
float denormal_product() {
  volatile float tiny = 1e-39f, half = 0.5f;
  return tiny * half;
}

// each member of a team of two: whether its product came out 0
std::vector<int> team_flushes() {
  std::vector<int> out(2, -1);
#pragma omp parallel num_threads(2)
  out[static_cast<size_t>(omp_get_thread_num())] = denormal_product() == 0.f;
  return out;
}

TEST(Denormals, FlushedOnTheThreadAndItsTeam) {
  std::thread([] {
    keep_denormals();
#pragma omp parallel num_threads(2)
    keep_denormals();
    ASSERT_FALSE(kernels::denormals_flushed());
    ASSERT_NE(denormal_product(), 0.f);
    ASSERT_EQ(team_flushes(), (std::vector<int>{0, 0}));  // the check can fail

    omp_set_num_threads(2);
    kernels::flush_denormals();
    EXPECT_TRUE(kernels::denormals_flushed());
    EXPECT_EQ(denormal_product(), 0.f);
    EXPECT_EQ(team_flushes(), (std::vector<int>{1, 1}));
  }).join();
}

TEST(Denormals, AGraphSetsTheModeOnTheThreadThatBuildsIt) {
  std::thread([] {
    keep_denormals();
    ASSERT_NE(denormal_product(), 0.f);
    Graph g(Mode::Inference);
    EXPECT_TRUE(kernels::denormals_flushed());
    EXPECT_EQ(denormal_product(), 0.f);
  }).join();
}

}  // namespace
}  // namespace heed
#endif
