// Element-wise kernels (see the header). Loops are written so GCC vectorises them at -O3.
// Leaves out: fusion across ops; fused chains live in their own kernels (rnn_cells.cc).
#include "heed/kernels/elementwise.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "heed/kernels/broadcast.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/random.h"
#include "heed/kernels/vmath.h"

namespace heed::kernels {
namespace {

constexpr int64_t kGrain = 1 << 15;  // below this many elements one thread is faster

template <class F>
void map(int64_t n, F f) {
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
    F local = f;  // a private copy: its pointers stay in registers, so the loop vectorises
#pragma omp simd
    for (int64_t i = b; i < e; ++i) local(i);
  });
}

// dst = f(i), or dst += f(i) with accumulate: a backward's first contribution writes its
// gradient instead of adding to a zero-filled one
template <class F>
void map_into(int64_t n, float* dst, bool accumulate, F f) {
  if (accumulate)
    map(n, [=](int64_t i) { dst[i] += f(i); });
  else
    map(n, [=](int64_t i) { dst[i] = f(i); });
}

template <Binary op>
inline float apply(float a, float b) {
  if constexpr (op == Binary::Add) return a + b;
  if constexpr (op == Binary::Sub) return a - b;
  if constexpr (op == Binary::Mul) return a * b;
  if constexpr (op == Binary::Div) return a / b;
}

template <Binary op, bool acc>
void binary_impl(const float* a, const Shape& sa, const float* b, const Shape& sb, float* c,
                 const Shape& out) {
  if (sa == out && sb == out) {  // the common, non-broadcast case
    map(out.numel(), [=](int64_t i) {
      float v = apply<op>(a[i], b[i]);
      c[i] = acc ? c[i] + v : v;
    });
    return;
  }
  Shape o = out.padded(4);
  auto ta = broadcast_strides(sa, out), tb = broadcast_strides(sb, out);
  int64_t n = o[3], rows = o[0] * o[1] * o[2];
  parallel_for(rows, grain_for(kGrain, n), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* pa = a + broadcast_row_offset(r, o, ta);
      const float* pb = b + broadcast_row_offset(r, o, tb);
      float* pc = c + r * n;
      int64_t xa = ta[3], xb = tb[3];
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) {
        float v = apply<op>(pa[j * xa], pb[j * xb]);
        pc[j] = acc ? pc[j] + v : v;
      }
    }
  });
}

template <bool acc>
void binary_dispatch(Binary op, const float* a, const Shape& sa, const float* b, const Shape& sb,
                     float* c, const Shape& out) {
  switch (op) {
    case Binary::Add:
      return binary_impl<Binary::Add, acc>(a, sa, b, sb, c, out);
    case Binary::Sub:
      return binary_impl<Binary::Sub, acc>(a, sa, b, sb, c, out);
    case Binary::Mul:
      return binary_impl<Binary::Mul, acc>(a, sa, b, sb, c, out);
    case Binary::Div:
      return binary_impl<Binary::Div, acc>(a, sa, b, sb, c, out);
  }
}

}  // namespace

void unary_forward(Unary op, const float* x, float* y, int64_t n) {
  switch (op) {
    case Unary::Tanh:
      return map(n, [=](int64_t i) { y[i] = vmath::tanh(x[i]); });
    case Unary::Sigmoid:
      return map(n, [=](int64_t i) { y[i] = vmath::sigmoid(x[i]); });
    case Unary::Relu:
      return map(n, [=](int64_t i) { y[i] = x[i] > 0.f ? x[i] : 0.f; });
    case Unary::Gelu:
      return map(n, [=](int64_t i) { y[i] = vmath::gelu(x[i]); });
    case Unary::Exp:
      return map(n, [=](int64_t i) { y[i] = vmath::exp(x[i]); });
    case Unary::Log:
      return map(n, [=](int64_t i) { y[i] = std::log(x[i]); });
    case Unary::Sqrt:
      return map(n, [=](int64_t i) { y[i] = std::sqrt(x[i]); });
  }
}

void unary_backward(Unary op, const float* x, const float* y, const float* dy, float* dx, int64_t n,
                    bool accumulate) {
  switch (op) {
    // d tanh = 1 - y^2
    case Unary::Tanh:
      return map_into(n, dx, accumulate, [=](int64_t i) { return dy[i] * (1.f - y[i] * y[i]); });
    // d sigmoid = y (1 - y)
    case Unary::Sigmoid:
      return map_into(n, dx, accumulate, [=](int64_t i) { return dy[i] * y[i] * (1.f - y[i]); });
    case Unary::Relu:
      return map_into(n, dx, accumulate, [=](int64_t i) { return x[i] > 0.f ? dy[i] : 0.f; });
    case Unary::Gelu:
      return map_into(n, dx, accumulate, [=](int64_t i) { return dy[i] * vmath::gelu_grad(x[i]); });
    // d exp = y;  d log = 1 / x
    case Unary::Exp:
      return map_into(n, dx, accumulate, [=](int64_t i) { return dy[i] * y[i]; });
    case Unary::Log:
      return map_into(n, dx, accumulate, [=](int64_t i) { return dy[i] / x[i]; });
    // d sqrt = 1 / (2 y)
    case Unary::Sqrt:
      return map_into(n, dx, accumulate, [=](int64_t i) { return dy[i] * 0.5f / y[i]; });
  }
}

namespace {

// f(a) of the gate and f'(a)
template <Gate G>
inline float gate_f(float a) {
  if constexpr (G == Gate::Tanh) return vmath::tanh(a);
  return a;
}
template <Gate G>
inline float gate_df(float f) {  // from f = gate_f(a)
  if constexpr (G == Gate::Tanh) return 1.f - f * f;
  return 1.f;
}

template <Gate G>
void gate_forward_rows(const float* ab, float* y, int64_t rows, int64_t C) {
  parallel_for(rows, grain_for(kSerialWork, 2 * C), [=](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* a = ab + r * 2 * C;
      const float* b = a + C;
      float* out = y + r * C;
#pragma omp simd
      for (int64_t c = 0; c < C; ++c) out[c] = gate_f<G>(a[c]) * vmath::sigmoid(b[c]);
    }
  });
}

template <Gate G, bool acc>
void gate_backward_rows(const float* ab, const float* dy, float* dab, int64_t rows, int64_t C) {
  parallel_for(rows, grain_for(kSerialWork, 2 * C), [=](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* a = ab + r * 2 * C;
      const float* b = a + C;
      const float* g = dy + r * C;
      float* da = dab + r * 2 * C;
      float* db = da + C;
#pragma omp simd
      for (int64_t c = 0; c < C; ++c) {
        const float f = gate_f<G>(a[c]), s = vmath::sigmoid(b[c]);
        const float ga = g[c] * gate_df<G>(f) * s, gb = g[c] * f * s * (1.f - s);
        da[c] = acc ? da[c] + ga : ga;
        db[c] = acc ? db[c] + gb : gb;
      }
    }
  });
}

}  // namespace

void gate_forward(Gate gate, const float* ab, float* y, int64_t rows, int64_t C) {
  if (gate == Gate::Tanh)
    gate_forward_rows<Gate::Tanh>(ab, y, rows, C);
  else
    gate_forward_rows<Gate::Glu>(ab, y, rows, C);
}

void gate_backward(Gate gate, const float* ab, const float* dy, float* dab, int64_t rows, int64_t C,
                   bool accumulate) {
  if (gate == Gate::Tanh)
    accumulate ? gate_backward_rows<Gate::Tanh, true>(ab, dy, dab, rows, C)
               : gate_backward_rows<Gate::Tanh, false>(ab, dy, dab, rows, C);
  else
    accumulate ? gate_backward_rows<Gate::Glu, true>(ab, dy, dab, rows, C)
               : gate_backward_rows<Gate::Glu, false>(ab, dy, dab, rows, C);
}

void binary(Binary op, const float* a, const Shape& sa, const float* b, const Shape& sb, float* c,
            const Shape& out, bool accumulate) {
  if (accumulate)
    binary_dispatch<true>(op, a, sa, b, sb, c, out);
  else
    binary_dispatch<false>(op, a, sa, b, sb, c, out);
}

void reduce_to(const float* g, const Shape& from, float* dst, const Shape& to, bool accumulate) {
  if (from == to || from.numel() == to.numel()) {
    if (accumulate)
      axpy(1.f, g, dst, from.numel());
    else
      copy(g, dst, from.numel());
    return;
  }
  // the sums below add into dst; `to` is the smaller shape, so zeroing it first costs little
  if (!accumulate) std::fill(dst, dst + to.numel(), 0.f);
  Shape o = from.padded(4);
  auto td = broadcast_strides(to, from);
  int64_t n = o[3], rows = o[0] * o[1] * o[2];
  if (td[3] == 0) {  // the last axis is summed: one row sum per row, serial over rows
    for (int64_t r = 0; r < rows; ++r) {
      const float* pg = g + r * n;
      float s = 0.f;
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < n; ++j) s += pg[j];
      dst[broadcast_row_offset(r, o, td)] += s;
    }
    return;
  }
  // The last axis is kept: threads split the columns, so rows that land on the same
  // destination row never race.
  parallel_for(n, 256, [&](int64_t c0, int64_t c1) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* pg = g + r * n;
      float* pd = dst + broadcast_row_offset(r, o, td);
#pragma omp simd
      for (int64_t j = c0; j < c1; ++j) pd[j] += pg[j];
    }
  });
}

void dropout(const float* x, float* y, int64_t n, uint64_t stream, float p, bool accumulate) {
  const float scale = 1.f / (1.f - p);
  const auto threshold = static_cast<uint32_t>(p * 16777216.f);  // keep when u * 2^24 >= p * 2^24
  if (accumulate)
    map(n, [=](int64_t i) {
      y[i] += hash_bits24(stream, static_cast<uint32_t>(i)) >= threshold ? x[i] * scale : 0.f;
    });
  else
    map(n, [=](int64_t i) {
      y[i] = hash_bits24(stream, static_cast<uint32_t>(i)) >= threshold ? x[i] * scale : 0.f;
    });
}

void copy(const float* x, float* y, int64_t n) {
  parallel_for(n, kGrain,
               [&](int64_t b, int64_t e) { std::memcpy(y + b, x + b, (e - b) * sizeof(float)); });
}

void axpy(float alpha, const float* x, float* y, int64_t n) {
  map(n, [=](int64_t i) { y[i] += alpha * x[i]; });
}

void preload_rows(const float* b, int64_t M, int64_t N, float* y, bool accumulate) {
  preload_block(b, M, N, y, N, accumulate);
}

void preload_block(const float* b, int64_t M, int64_t N, float* y, int64_t ldy, bool accumulate) {
  for (int64_t i = 0; i < M; ++i) {
    float* row = y + i * ldy;
    if (accumulate) {
#pragma omp simd
      for (int64_t j = 0; j < N; ++j) row[j] += b[j];
    } else {
      std::copy(b, b + N, row);
    }
  }
}

void affine(const float* x, float alpha, float beta, float* y, int64_t n) {
  map(n, [=](int64_t i) { y[i] = alpha * x[i] + beta; });
}

void scale(float* x, float alpha, int64_t n) {
  map(n, [=](int64_t i) { x[i] *= alpha; });
}

// Partial sums in the vector lanes (a simd reduction): the serial order would make every
// element wait for the previous add, ~4 cycles each (3 % of a Transformer step, in clipping).
double sum_squares(const float* x, int64_t n) {
  double s = 0;
#pragma omp parallel for simd reduction(+ : s) if (n > kGrain)
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
  return s;
}

}  // namespace heed::kernels
