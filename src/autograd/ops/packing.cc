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

Var pack(Var x, const Packing& p) {
  check(x.shape().rank() == 3 && x.dim(0) == p.B() && x.dim(1) == p.T, "pack: x ", x.shape().str(),
        " for ", p.B(), " sequences padded to ", p.T);
  const int64_t B = p.B(), T = p.T, D = x.dim(2);
  if (p.dense()) return reshape(x, Shape{p.N, D});
  Graph& G = x.graph();
  Tensor y = G.alloc(Shape{p.N, D});  // [N, D]
  kernels::pack_rows(x.value().data(), y.data(), B, T, D, p.lengths.data(), false);
  const int32_t* lengths = p.lengths.data();
  return G.make(y, {x}, [=](const Tensor& dy) {
    kernels::unpack_rows(dy.data(), x.grad().data(), B, T, D, lengths, true);
  });
}

Var unpack(Var x, const Packing& p) {
  check(x.shape().rank() == 2 && x.dim(0) == p.N, "unpack: x ", x.shape().str(), " for ", p.N,
        " packed rows");
  const int64_t B = p.B(), T = p.T, D = x.dim(1);
  if (p.dense()) return reshape(x, Shape{B, T, D});
  Graph& G = x.graph();
  Tensor y = G.alloc(Shape{B, T, D});  // [B, T, D]
  kernels::unpack_rows(x.value().data(), y.data(), B, T, D, p.lengths.data(), false);
  const int32_t* lengths = p.lengths.data();
  return G.make(y, {x}, [=](const Tensor& dy) {
    kernels::pack_rows(dy.data(), x.grad().data(), B, T, D, lengths, true);
  });
}

}  // namespace heed
