// Inverted dropout with a counter-based mask, regenerated in backward.
// Leaves out: storing masks (recomputing the hash is cheaper than the memory traffic).
#include "heed/autograd/ops/dropout.h"

#include "heed/kernels/parallel.h"
#include "heed/kernels/random.h"
#include "heed/util/error.h"

namespace heed {
namespace {
// out[i] = in[i] * keep_i / (1 - p), keep_i = hash(stream, i) >= p
void apply_mask(const float* in, float* out, int64_t n, uint64_t stream, float p, bool acc) {
  const float scale = 1.f / (1.f - p);
  parallel_for(n, 1 << 15, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      float v = hash_uniform(stream, static_cast<uint64_t>(i)) >= p ? in[i] * scale : 0.f;
      out[i] = acc ? out[i] + v : v;
    }
  });
}
}  // namespace

Var dropout(Var x, float p) {
  check(p >= 0.f && p < 1.f, "dropout: p must be in [0, 1), got ", p);
  Graph& G = x.graph();
  if (!G.training() || p == 0.f) return x;
  uint64_t stream = G.next_stream();
  Tensor y = G.alloc(x.shape());
  int64_t n = y.numel();
  apply_mask(x.value().data(), y.data(), n, stream, p, false);
  return G.make(y, {x}, [=](const Tensor& dy) {
    apply_mask(dy.data(), x.grad().data(), n, stream, p, true);
  });
}

}  // namespace heed
