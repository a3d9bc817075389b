// Fused GRU/LSTM gate kernels (equations in the header), threaded over the batch.
// Leaves out: the GEMMs (kernels/gemm.cc through autograd/ops/rnn_cell.cc).
#include "heed/kernels/rnn_cells.h"

#include "heed/kernels/parallel.h"
#include "heed/kernels/vmath.h"

namespace heed::kernels {

void gru_forward(const float* gx, const float* gh, const float* h, float* h_out, float* gates,
                 int64_t B, int64_t H) {
  parallel_for(B, grain_for(16384, H), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const float *x = gx + b * 3 * H, *u = gh + b * 3 * H, *hp = h + b * H;
      float *g = gates + b * 3 * H, *ho = h_out + b * H;
#pragma omp simd
      for (int64_t j = 0; j < H; ++j) {
        float r = vmath::sigmoid(x[j] + u[j]);
        float z = vmath::sigmoid(x[H + j] + u[H + j]);
        float n = vmath::tanh(x[2 * H + j] + r * u[2 * H + j]);
        g[j] = r;
        g[H + j] = z;
        g[2 * H + j] = n;
        ho[j] = (1.f - z) * n + z * hp[j];
      }
    }
  });
}

void gru_backward(const float* dh_out, const float* h, const float* gates, const float* gh,
                  float* dgh, float* dgx, float* dh, int64_t B, int64_t H) {
  parallel_for(B, grain_for(16384, H), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const float *d = dh_out + b * H, *hp = h + b * H, *g = gates + b * 3 * H, *u = gh + b * 3 * H;
      float* du = dgh + b * 3 * H;
#pragma omp simd
      for (int64_t j = 0; j < H; ++j) {
        float r = g[j], z = g[H + j], n = g[2 * H + j];
        float dn = d[j] * (1.f - z) * (1.f - n * n);
        float dz = d[j] * (hp[j] - n) * z * (1.f - z);
        float dr = dn * u[2 * H + j] * r * (1.f - r);
        du[j] = dr;
        du[H + j] = dz;
        du[2 * H + j] = dn * r;
      }
      if (dgx) {
        float* dx = dgx + b * 3 * H;
#pragma omp simd
        for (int64_t j = 0; j < 2 * H; ++j) dx[j] += du[j];
#pragma omp simd
        for (int64_t j = 0; j < H; ++j) {
          float dn = d[j] * (1.f - g[H + j]) * (1.f - g[2 * H + j] * g[2 * H + j]);
          dx[2 * H + j] += dn;
        }
      }
      if (dh) {
        float* dp = dh + b * H;
#pragma omp simd
        for (int64_t j = 0; j < H; ++j) dp[j] += d[j] * g[H + j];
      }
    }
  });
}

void lstm_forward(float* pre, const float* c, float* h_out, float* c_out, float* tanh_c, int64_t B,
                  int64_t H) {
  parallel_for(B, grain_for(16384, H), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      float* g = pre + b * 4 * H;
      const float* cp = c + b * H;
      float *ho = h_out + b * H, *co = c_out + b * H, *tc = tanh_c + b * H;
#pragma omp simd
      for (int64_t j = 0; j < H; ++j) {
        float i = vmath::sigmoid(g[j]);
        float f = vmath::sigmoid(g[H + j]);
        float gg = vmath::tanh(g[2 * H + j]);
        float o = vmath::sigmoid(g[3 * H + j]);
        g[j] = i;
        g[H + j] = f;
        g[2 * H + j] = gg;
        g[3 * H + j] = o;
        float cn = f * cp[j] + i * gg;
        float t = vmath::tanh(cn);
        co[j] = cn;
        tc[j] = t;
        ho[j] = o * t;
      }
    }
  });
}

void lstm_backward(const float* dh_out, const float* dc_out, const float* gates, const float* c,
                   const float* tanh_c, float* dpre, float* dc, int64_t B, int64_t H) {
  parallel_for(B, grain_for(16384, H), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const float *g = gates + b * 4 * H, *cp = c + b * H, *tc = tanh_c + b * H;
      const float* dho = dh_out ? dh_out + b * H : nullptr;
      const float* dco = dc_out ? dc_out + b * H : nullptr;
      float* dp = dpre + b * 4 * H;
      float* dcp = dc ? dc + b * H : nullptr;
      for (int64_t j = 0; j < H; ++j) {
        float i = g[j], f = g[H + j], gg = g[2 * H + j], o = g[3 * H + j], t = tc[j];
        float dhj = dho ? dho[j] : 0.f;
        float dct = (dco ? dco[j] : 0.f) + dhj * o * (1.f - t * t);
        dp[j] = dct * gg * i * (1.f - i);
        dp[H + j] = dct * cp[j] * f * (1.f - f);
        dp[2 * H + j] = dct * i * (1.f - gg * gg);
        dp[3 * H + j] = dhj * t * o * (1.f - o);
        if (dcp) dcp[j] += dct * f;
      }
    }
  });
}

}  // namespace heed::kernels
