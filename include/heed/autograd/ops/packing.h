// Packed sequences: a batch of B sequences of different lengths stored back to back without
// padding, [N, D] with N = the sum of the lengths, instead of padded to the longest, [B, T, D].
// Every position-wise layer (projections, feed-forward, LayerNorm, the output layer and the
// loss) then computes on real positions only (on random batches of the benchmarks, about half
// the positions are padding), and so does the fused attention's packed form (ops/attention.h);
// pack/unpack convert for what needs the [B, T, D] view (recurrences, convolutions, the
// attention heatmaps).
#pragma once

#include <cstdint>
#include <span>

#include "heed/autograd/graph.h"

namespace heed {

struct Packing {
  std::span<const int32_t> lengths;  // [B], in the graph's arena (or outliving its use)
  int64_t T = 0;                     // the padded length: the longest sequence (or more)
  int64_t N = 0;                     // packed rows: the sum of the lengths
  int64_t B() const { return static_cast<int64_t>(lengths.size()); }
  bool dense() const { return N == B() * T; }  // no padding: packed and padded coincide
};
// The packing of sequences of these lengths (copied into the graph's arena), padded to T
// (0: the longest).
Packing make_packing(Graph& g, std::span<const int32_t> lengths, int64_t T = 0);
// B sequences of one position each (a decoding step: packed and padded [B, 1, D] coincide).
Packing single_positions(Graph& g, int64_t B);
// B sequences of T positions each (no padding: packed and padded [B, T, D] coincide).
Packing equal_lengths(Graph& g, int64_t B, int64_t T);

// Time-major ids [T, B] -> packed [N] (sequence after sequence), with each id's position
// 0, 1, ... in its sequence; both in the graph's arena. With first >= 0, that id is put before
// every sequence (a [CLS] position) and p's lengths count it: ids[t] of a sequence is then
// time_major[(t - 1) B + b].
struct PackedIds {
  std::span<const int32_t> ids, positions;  // [N], [N]
};
PackedIds pack_ids(Graph& g, std::span<const int32_t> time_major, const Packing& p,
                   int32_t first = -1);

// x [B, T, D] -> [N, D]: the non-padding rows, sequence after sequence.
Var pack(Var x, const Packing& p);
// x [N, D] -> [B, T, D], padding rows 0 (and no gradient).
Var unpack(Var x, const Packing& p);

// Rows by index, each the other's backward (an RNN's time-major packing, nn/rnn.h: the rows
// that are not padding, in the order the recurrence reads them):
// x [R, D] -> [n, D], row i = x[rows[i]] (rows distinct, each in 0..R-1).
Var gather_rows(Var x, std::span<const int32_t> rows);
// x [n, D] -> [R, D], row rows[i] = x[i], the other rows 0 (and no gradient).
Var scatter_rows(Var x, std::span<const int32_t> rows, int64_t R);

}  // namespace heed
