// Embedding lookup; the backward touches only the looked-up rows.
// Leaves out: sharing tables between source and target (a model decision: pass the same Var).
#include "heed/autograd/ops/embedding.h"

#include <cstring>

#include "heed/kernels/parallel.h"
#include "heed/util/error.h"

namespace heed {

Var embedding(Var table, std::span<const int32_t> ids, const Shape& ids_shape) {
  const Shape& st = table.shape();
  check(st.rank() == 2, "embedding: the table must be [V, D], not ", st);
  check(static_cast<int64_t>(ids.size()) == ids_shape.numel(), "embedding: ", ids.size(),
        " ids for shape ", ids_shape);
  const int64_t V = st[0], D = st[1], N = ids_shape.numel();
  for (int64_t i = 0; i < N; ++i)
    check(ids[i] >= 0 && ids[i] < V, "embedding: id ", ids[i], " at position ", i,
          " is outside the vocabulary [0, ", V, ")");
  Graph& G = table.graph();
  Tensor y = G.alloc(ids_shape.appended(D));  // [ids..., D]
  const float* T = table.value().data();
  parallel_for(N, 64, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      std::memcpy(y.data() + i * D, T + ids[i] * D, D * sizeof(float));
  });
  std::span<int32_t> saved = G.copy<int32_t>(ids);
  return G.make(y, {table}, [=](const Tensor& dy) {
    Tensor& dT = table.grad();
    if (Parameter* p = table.param()) p->mark_rows(saved);
    for (int64_t i = 0; i < N; ++i) {  // dT[ids[i]] += dy[i]; serial: ids repeat
      float* row = dT.data() + saved[i] * D;
      const float* g = dy.data() + i * D;
#pragma omp simd
      for (int64_t j = 0; j < D; ++j) row[j] += g[j];
    }
  });
}

}  // namespace heed
