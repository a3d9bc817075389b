// Denormal floats flushed to zero on the threads that compute (x86: MXCSR's FTZ and DAZ bits).
// On Intel cores an SSE/AVX operation whose operand or result is denormal (|x| < 1.2e-38) takes
// a microcode assist of about a hundred cycles. Monotonic attention's expected alignment (products
// of many 1 - p_ij) underflows into denormals on long sources, and its backward carried them into
// every GRU gradient product: on a Xeon (Emerald Rapids) training at S = 100 ran 2.95x slower
// than with them flushed, a dW product of 64 rows at 11 GFLOP/s instead of 107. AMD's Zen cores
// pay little, which is why only an Intel CPU showed it. TensorFlow flushes them the same way; a
// value below 1.2e-38 becomes 0, far below any figure a model's outputs depend on.
// Leaves out: other architectures (a no-op there; AArch64's FPCR.FZ would be the equivalent).
#pragma once

namespace heed::kernels {

// Flushes denormals on the calling thread and, the first time a thread calls it, on the OpenMP
// team that thread opens (threads the team adds later are cloned from it and inherit the mode).
// adopt_threads() calls it, so every thread that builds a Graph computes this way.
void flush_denormals();

// Whether the calling thread flushes denormal inputs and results to zero.
bool denormals_flushed();

}  // namespace heed::kernels
