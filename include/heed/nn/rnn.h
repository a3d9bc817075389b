// Recurrent layers: RnnCell (one GRU or LSTM cell: the input projection of a whole sequence in
// one GEMM, then one fused step per time), RnnLayer (a cell run over a time-major packed batch
// in either direction) and RnnEncoder (embeddings, then 1..N uni- or bidirectional layers,
// annotations h_j = [->h_j ; <-h_j] as in Bahdanau et al. 2015, section 3.2).
// Padding is never computed: each step runs only the sequences still going (TimeMajorPacking),
// so every sequence sees only its own tokens; a sequence's state is frozen after its last token
// (forward) and zero until its last token (backward).
// Leaves out: the decoder loop (models/rnn_seq2seq) and variational dropout.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "heed/autograd/graph.h"
#include "heed/nn/init.h"
#include "heed/util/names.h"

namespace heed {

enum class CellKind { Gru, Lstm };
std::span<const Named<CellKind>> names(CellKind);  // "gru" | "lstm"
const char* cell_name(CellKind k);
CellKind parse_cell(const std::string& s);  // the inverse; an Error lists the names

// How a cell's weights start (--rnn-init):
//   glorot:  W Glorot-uniform, U orthogonal per gate, biases 0 and an LSTM's forget gate's 1
//            (Jozefowicz et al. 2015) -- heed's text models;
//   uniform: every weight and bias U(-k, k), k = 1/sqrt(H), as Torch's and PyTorch's nn.LSTM
//            (which has two biases, b_ih + b_hh; here one) -- heed's recognizers (docs/RESULTS.md,
//            "heed hears, continued": a BiLSTM-CTC learns faster per update from it).
enum class RnnInit { Glorot, Uniform };
std::span<const Named<RnnInit>> names(RnnInit);  // "glorot" | "uniform"

struct RnnState {
  Var h;  // [B, H]
  Var c;  // [B, H], LSTM only
};

class RnnCell {
 public:
  RnnCell(CellKind kind, int64_t input, int64_t hidden, const Scope& scope,
          RnnInit init = RnnInit::Glorot);
  int64_t hidden() const { return hidden_; }
  CellKind kind() const { return kind_; }
  // W x + b for all positions at once: x [..., In] -> [..., G*H]
  Var project(Graph& g, Var x) const;
  // One step from a projected input gx [B, G*H]: the fused cell (autograd/ops/rnn_cell.h).
  RnnState step(Graph& g, Var gx, const RnnState& prev) const;
  RnnState zero_state(Graph& g, int64_t B) const;

 private:
  CellKind kind_;
  int64_t hidden_;
  Parameter *W_, *b_, *U_, *bh_;  // [G*H, In], [G*H], [G*H, H], [G*H] (bh: GRU only)
};

// A padded, time-major batch [S, B, ...] as a recurrence reads it (PyTorch's PackedSequence):
// the sequences longest first (order[i]: the batch row of the i-th longest), and at step t only
// the batch_sizes[t] = #{b : lengths[b] > t} of them still running: rows offsets[t] ..
// offsets[t] + batch_sizes[t] of the packed [N, D] block, N = the sum of the lengths; packed row
// offsets[t] + i is padded row rows[offsets[t] + i] = t B + order[i]. Padding is never computed.
struct TimeMajorPacking {
  int64_t S = 0, B = 0, N = 0;
  std::vector<int32_t> order, rows;                      // [B], [N]
  std::vector<int64_t> batch_sizes;                      // [S]
  std::vector<int64_t> offsets;                          // [S + 1]
  bool dense() const { return N == S * B && identity; }  // packed and padded coincide
  bool identity = true;                                  // order is 0 .. B-1
};
TimeMajorPacking time_major_packing(std::span<const int32_t> lengths, int64_t S);

class RnnLayer {
 public:
  RnnLayer(CellKind kind, int64_t input, int64_t hidden, bool reverse, const Scope& scope,
           RnnInit init = RnnInit::Glorot);
  struct Output {
    Var states;     // [N, H] packed as p
    RnnState last;  // [B, H] in p's order (longest first): the state after each sequence's last
                    // token (forward) / first (reverse)
  };
  // x [N, In] packed as p. Step t runs the cell on its batch_sizes[t] rows only; a sequence
  // that has ended keeps its state (forward), one not yet begun stays at zero (reverse).
  Output forward(Graph& g, Var x, const TimeMajorPacking& p) const;
  // One sequence in pieces (a forward layer): x [n, In], the frames after those `state` has
  // seen (a zero state before the first) -> their states [n, H]; `state` becomes the last one's.
  Var forward_from(Graph& g, Var x, RnnState& state) const;
  int64_t hidden() const { return cell_.hidden(); }
  bool lstm() const { return cell_.kind() == CellKind::Lstm; }

 private:
  RnnCell cell_;
  bool reverse_;
};

struct RnnEncoderConfig {
  CellKind cell = CellKind::Gru;
  int64_t vocab = 0;     // V; 0: no embedding table, the encoder reads vectors of E
                         // (forward_vectors: a speech front end's output)
  int64_t embed = 256;   // E
  int64_t hidden = 256;  // H per direction
  int layers = 1;
  bool bidirectional = true;
  float dropout = 0.f;             // between layers and on the embeddings
  RnnInit init = RnnInit::Glorot;  // its cells' (config.json's "rnn_init" when uniform)
};

class RnnEncoder {
 public:
  RnnEncoder(const RnnEncoderConfig& config, const Scope& scope);
  struct Output {
    Var annotations;  // h [B, S, Dm], Dm = H or 2H (batch-major, for attention)
    Var final_fwd;    // ->h at each sequence's last token [B, H]
    Var final_bwd;    // <-h at each sequence's first token [B, H] (bidirectional only)
  };
  // ids [S * B] time-major, lengths [B]
  Output forward(Graph& g, std::span<const int32_t> ids, int64_t S,
                 std::span<const int32_t> lengths) const;
  // x [S, B, E] time-major (the embeddings, or a front end's vectors), lengths [B]
  Output forward_vectors(Graph& g, Var x, std::span<const int32_t> lengths) const;
  int64_t annotation_dim() const { return config_.hidden * (config_.bidirectional ? 2 : 1); }

  // A forward-only encoder reads one sequence as it arrives: push() the next frames' vectors
  // x [n, 1, E] and get their annotations [1, n, H], each frame computed once, the layers'
  // states carried from piece to piece on the heap (so that a graph rewound or cleared between
  // pieces loses nothing). The annotations equal forward_vectors' over the whole sequence.
  // (Dropout is off: this is decoding.)
  class Stream {
   public:
    explicit Stream(const RnnEncoder& encoder);
    Var push(Graph& g, Var x);

   private:
    const RnnEncoder& e_;
    std::vector<Tensor> h_, c_;  // per layer [1, H] (c_: LSTM only); empty before the first
  };
  // An Error for a bidirectional encoder, whose first state needs the sequence's last frame.
  Stream stream() const;

 private:
  RnnEncoderConfig config_;
  Parameter* embed_ = nullptr;  // [V, E] (none when V is 0)
  std::vector<RnnLayer> fwd_, bwd_;
};

}  // namespace heed
