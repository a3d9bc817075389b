// pack / unpack: each the other's backward (see the header).
#include "heed/autograd/ops/packing.h"

#include <algorithm>

#include "heed/autograd/ops/shape.h"
#include "heed/kernels/layout.h"
#include "heed/util/error.h"

namespace heed {

Packing make_packing(Graph& g, std::span<const int32_t> lengths, int64_t T) {
  Packing p;
  p.lengths = g.copy(lengths);
  int64_t longest = 0;
  for (int32_t len : lengths) {
    check(len >= 0, "packing: negative length ", len);
    longest = std::max<int64_t>(longest, len);
    p.N += len;
  }
  check(T == 0 || T >= longest, "packing: padded length ", T, " < the longest sequence ", longest);
  p.T = T == 0 ? longest : T;
  return p;
}

Packing single_positions(Graph& g, int64_t B) {
  return equal_lengths(g, B, 1);
}

Packing equal_lengths(Graph& g, int64_t B, int64_t T) {
  check(B >= 0 && T >= 0, "packing: ", B, " sequences of ", T, " positions");
  int32_t* lengths = g.arena().array<int32_t>(static_cast<size_t>(B));
  std::fill(lengths, lengths + B, static_cast<int32_t>(T));
  return {.lengths = {lengths, static_cast<size_t>(B)}, .T = T, .N = B * T};
}

PackedIds pack_ids(Graph& g, std::span<const int32_t> time_major, const Packing& p, int32_t first) {
  const int64_t B = p.B(), skip = first >= 0 ? 1 : 0;
  int32_t* ids = g.arena().array<int32_t>(static_cast<size_t>(p.N));
  int32_t* pos = g.arena().array<int32_t>(static_cast<size_t>(p.N));
  int64_t n = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < p.lengths[b]; ++t, ++n) {
      ids[n] = t < skip ? first : time_major[(t - skip) * B + b];
      pos[n] = static_cast<int32_t>(t);
    }
  const auto N = static_cast<size_t>(p.N);
  return {{ids, N}, {pos, N}};
}

Var pack(Var x, const Packing& p) {
  check(x.shape().rank() == 3 && x.dim(0) == p.B() && x.dim(1) == p.T, "pack: x ", x.shape(),
        " for ", p.B(), " sequences padded to ", p.T);
  const int64_t B = p.B(), T = p.T, D = x.dim(2);
  if (p.dense()) return reshape(x, Shape{p.N, D});
  Graph& G = x.graph();
  Tensor y = G.alloc(Shape{p.N, D});  // [N, D]
  kernels::pack_rows(x.value().data(), y.data(), B, T, D, p.lengths.data(), false);
  const int32_t* lengths = p.lengths.data();
  return G.make(y, {x}, [=](const Tensor& dy) {
    const Var::GradTarget dx = x.grad_target();  // unpack_rows writes the padding rows too
    kernels::unpack_rows(dy.data(), dx.data, B, T, D, lengths, dx.accumulate());
  });
}

Var unpack(Var x, const Packing& p) {
  check(x.shape().rank() == 2 && x.dim(0) == p.N, "unpack: x ", x.shape(), " for ", p.N,
        " packed rows");
  const int64_t B = p.B(), T = p.T, D = x.dim(1);
  if (p.dense()) return reshape(x, Shape{B, T, D});
  Graph& G = x.graph();
  Tensor y = G.alloc(Shape{B, T, D});  // [B, T, D]
  kernels::unpack_rows(x.value().data(), y.data(), B, T, D, p.lengths.data(), false);
  const int32_t* lengths = p.lengths.data();
  return G.make(y, {x}, [=](const Tensor& dy) {
    const Var::GradTarget dx = x.grad_target();
    kernels::pack_rows(dy.data(), dx.data, B, T, D, lengths, dx.accumulate());
  });
}

namespace {
void check_rows(const char* op, std::span<const int32_t> rows, int64_t R) {
  for (int32_t r : rows) check(r >= 0 && r < R, op, ": row ", r, " is not in 0..", R - 1);
}
}  // namespace

Var gather_rows(Var x, std::span<const int32_t> rows) {
  check(x.shape().rank() == 2, "gather_rows: x ", x.shape(), " is not [R, D]");
  const int64_t R = x.dim(0), D = x.dim(1);
  check_rows("gather_rows", rows, R);
  Graph& G = x.graph();
  const std::span<const int32_t> idx = G.copy(rows);
  Tensor y = G.alloc(Shape{static_cast<int64_t>(idx.size()), D});  // [n, D]
  kernels::gather_rows(x.value().data(), idx, D, y.data(), false);
  return G.make(y, {x}, [=](const Tensor& dy) {  // dx[rows[i]] += dy[i]
    const Var::GradTarget dx = x.grad_target();
    kernels::scatter_rows(dy.data(), idx, D, dx.data, R, dx.accumulate());
  });
}

Var scatter_rows(Var x, std::span<const int32_t> rows, int64_t R) {
  check(x.shape().rank() == 2 && x.dim(0) == static_cast<int64_t>(rows.size()), "scatter_rows: x ",
        x.shape(), " for ", rows.size(), " rows");
  check_rows("scatter_rows", rows, R);
  const int64_t D = x.dim(1);
  Graph& G = x.graph();
  const std::span<const int32_t> idx = G.copy(rows);
  Tensor y = G.alloc(Shape{R, D});  // [R, D]
  kernels::scatter_rows(x.value().data(), idx, D, y.data(), R, false);
  return G.make(y, {x}, [=](const Tensor& dy) {  // dx[i] += dy[rows[i]]
    const Var::GradTarget dx = x.grad_target();
    kernels::gather_rows(dy.data(), idx, D, dx.data, dx.accumulate());
  });
}

}  // namespace heed
