// What every encoder-decoder of heed offers to training and search, whatever its architecture
// (RNN with attention, Transformer): a teacher-forced loss over a padded batch, and incremental
// decoding, where a batch of sources is encoded once and the decoder then advances one target
// position per step (the "start state / step" split of Marian's and CTranslate2's decoders).
// The trainer (train/), greedy and beam search (decode/) and the CLI only see this interface.
// Leaves out: the models themselves (models/rnn_seq2seq.h, models/transformer_seq2seq.h).
#pragma once

#include <climits>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "heed/autograd/graph.h"

namespace heed {

// A padded, time-major batch. Padding ids are Vocab::kPad; lengths exclude padding.
struct Seq2SeqBatch {
  int64_t B = 0, S = 0, T = 0;
  std::vector<int32_t> src;          // [S, B]
  std::vector<int32_t> src_lengths;  // [B]
  std::vector<int32_t> tgt_in;       // [T, B]: BOS y_1 .. y_{n}
  std::vector<int32_t> tgt_out;      // [T, B]: y_1 .. y_n EOS, padding = kPad (ignored)
  int64_t target_tokens = 0;         // non-padding entries of tgt_out
  int64_t wait_k = 0;  // > 0: the loss of a wait-k model at this k instead of its own (multi-path
                       // training, Elbayad et al. 2020: one model for every k)
  int64_t step = 0;    // the training step (a schedule inside a model: hard attention's Gumbel
                       // temperature)
  // A spoken source (a model with an audio front end, nn/audio_front_end.h): log-mel frames
  // [S, B, F] time-major, zero past each length, instead of src (left empty); src_lengths are
  // then the frame counts.
  std::vector<float> features;
  int64_t F = 0;  // bins per frame; 0: the source is src's ids
};
// The target side's lengths [B]: BOS y_1 .. y_n in tgt_in, as many as y_1 .. y_n EOS in tgt_out.
std::vector<int32_t> target_lengths(const Seq2SeqBatch& b);
// Builds a batch from id sequences (without BOS/EOS); reverse_source flips each source.
Seq2SeqBatch make_batch(const std::vector<std::vector<int32_t>>& src,
                        const std::vector<std::vector<int32_t>>& tgt, bool reverse_source);
// A batch of spoken sources: each utterance's frames [n_i, bins] row-major, time-major in
// `features` and zero-padded to max(n_i, min_frames) frames; targets as make_batch's (empty
// ones for decoding).
Seq2SeqBatch make_audio_batch(const std::vector<std::span<const float>>& frames, int64_t bins,
                              const std::vector<std::vector<int32_t>>& tgt, int64_t min_frames);

// A decoded output: tokens before EOS and, per output token, the attention weights over its
// source in the order given (the EOS row included last).
struct Hypothesis {
  std::vector<int32_t> tokens;
  std::vector<std::vector<float>> attention;  // [len(tokens) + 1][S_b]
  double log_prob = 0;                        // the sum of token_log_probs
  std::vector<float> token_log_probs;         // [len(tokens) + 1]: log p of each token, EOS last
                                              // (len(tokens) when cut at the length limit)
  // CTC, with attention: per input position (upsample per source unit) the attention row that
  // the most probable alignment of `tokens` is in (a token's index, or len(tokens): the blank)
  std::vector<int32_t> path{};
};

// Row `row` of a decoding step's attention weights [rows, S] as the rows of a Hypothesis keep
// it: over the real positions of source `source` of batch b, in the order the source was given
// (turned back for a model that reads its source reversed). Audio (b.F > 0) is attended at the
// front end's frames: S and the lengths are the subsampled ones (nn/audio_front_end.h).
std::vector<float> source_attention(const float* weights, int64_t row, const Seq2SeqBatch& b,
                                    int64_t source, bool reversed);

// Rows repeated for decoding: x [N, ...] -> [N k, ...] with row n k + j = x[n]; and lengths
// [N] -> [N k] alike, in the graph's arena.
Var repeat_rows(Var x, int64_t k);
std::span<const int32_t> repeat_rows(Graph& g, std::span<const int32_t> lengths, int64_t k);

// What a step scores: log-probabilities; logits (an argmax needs no softmax); each row's best
// entries and its log-sum-exp alone (beam search, from decoders whose best_k() > 0: no [B, V]
// row made); each row's best entry alone, no log-sum-exp (greedy search asked for no scores,
// from decoders whose best_k() is 1); or nothing, the state advanced alone (online decoding
// replaying the tokens written over a longer source prefix).
enum class Scores { LogProbs, LogitsOnly, Best, Argmax, None };

// Which attention weights decoding reports (--attention-out): the Transformer's cross-attention
// of one decoder layer (-1: the last), one head or the mean over heads (-1); the RNN has one.
struct AttentionChoice {
  bool wanted = true;  // false: no weights (validation, benchmarks)
  int layer = -1;
  int head = -1;
  bool distribution = false;  // hard attention: alpha_i, what a position was chosen from,
                              // instead of the one-hot row of the position chosen
};

// Decoding of one encoded batch of B rows. step() feeds the previous token of every row
// (BOS first) and scores the next one; its pointers stay valid until the next call.
class IncrementalDecoder {
 public:
  virtual ~IncrementalDecoder() = default;
  struct Step {
    const float* scores = nullptr;   // [B, V]: log-probabilities, logits, or none (Scores)
    const float* weights = nullptr;  // [B, S] attention over the padded source, or nullptr
    bool ran_off = false;  // hard monotonic attention: some row's attention (some head's) has run
                           // off the end of the source without stopping (online decoding READs)
    // Scores::Best: each row's best_k() entries from Vocab::kEos on, best first (ties by lower
    // id) [B, best_k()], their logits, and the row's log-sum-exp [B]: log p = logit - log_z.
    // Scores::Argmax: the same entries and logits (the same ones), log_z null
    const int32_t* best_ids = nullptr;
    const float* best_logits = nullptr;
    const float* log_z = nullptr;
  };
  virtual Step step(std::span<const int32_t> prev, Scores scores) = 0;
  // Whether a step's log-probabilities are the log-softmax of its logits, row by row: a search
  // may then ask for the logits alone and normalise only the entries it reads (beam search's
  // best K of a row), instead of having every row written again. False: a mixture (ensembles)
  // or a sum of scores (joint CTC-attention) is scored only as Scores::LogProbs.
  virtual bool log_probs_are_log_softmax() const { return false; }
  // How many best entries a row Scores::Best gives (the K of the beam it was started for); 0:
  // this decoder does not score that way (it gives logits or log-probabilities only).
  virtual int64_t best_k() const { return 0; }
  // Beam search: row r continues the decoder state of row from[r] (rows of one source only).
  virtual void reorder(std::span<const int32_t> from) = 0;
  // Greedy search: only the rows `keep` (ascending) go on, as rows 0..n-1, so that the steps
  // after a sentence has ended cost what the unfinished ones need. False: this decoder keeps
  // every row (the search goes on computing the finished ones, and ignores them).
  virtual bool drop_rows(std::span<const int32_t> /*keep*/) { return false; }
  // Online decoding (decode/online.h): each row's source has grown to the longer prefix in
  // `longer` (the same rows), and under the model's online policy nothing the decoder computed
  // so far depends on the units added (a unidirectional encoder). It encodes `longer` and goes
  // on from its state, stepping as a decoder started on `longer` and fed the same tokens would;
  // `retake`: the last step is taken back first (it ran off the shorter prefix, and is taken
  // again). False: this decoder cannot (the caller starts another and replays what it wrote).
  virtual bool extend_source(const Seq2SeqBatch& /*longer*/, bool /*retake*/) { return false; }
};

// A step's Step::scores: the log-probabilities or the logits, as asked; nullptr for Scores::None.
inline const float* step_scores(Scores scores, const Var& logits, const Var& log_probs) {
  if (scores == Scores::None || scores == Scores::Best || scores == Scores::Argmax) return nullptr;
  return (scores == Scores::LogProbs ? log_probs : logits).value().data();
}

// The decoder layers and heads whose cross-attention decoding can report (AttentionChoice):
// {0, 0} for a model with one attention (the RNN). Layers first..layers-1 attend to the source
// (a Transformer with monotonic heads in its top layers only: the ones below do not).
struct DecoderHeads {
  int layers = 0, heads = 0, first = 0;
};

// An alignment-free model (CTC: models/ctc.h) has no decoder: it scores every target label, and
// a blank, at each of its input positions, and search reads the labels off those scores
// (decode/ctc_search.h). Encoder-decoders have none (Seq2SeqModel::frame_labeller).
struct FrameScores {
  Var log_probs;                 // [B, T, V]: log p(class | position), the blank included
  std::vector<int32_t> lengths;  // [B]: the real positions of each row, upsample x its source
};
class FrameLabeller {
 public:
  virtual ~FrameLabeller() = default;
  // batch.src (targets unused) -> the positions' log-probabilities
  virtual FrameScores frame_log_probs(Graph& g, const Seq2SeqBatch& batch) const = 0;
  virtual int64_t upsample() const = 0;  // positions per source unit
  virtual int32_t blank() const = 0;     // the blank's class id

  // A causal recognizer's labeller reads one utterance's feature frames as they arrive: each
  // push of n frames [n, F] gives the log-probabilities [m, V] of the m positions they complete
  // (a position needs its front end's whole window), each position computed once; finish()
  // ends the utterance (an utterance shorter than one window gets its one position, padded, as
  // decoding it whole does). The positions and their scores equal frame_log_probs' of the
  // whole utterance. stream() is an Error for a model that is not causal.
  class Stream {
   public:
    virtual ~Stream() = default;
    virtual std::vector<float> push(std::span<const float> features) = 0;
    virtual std::vector<float> finish() = 0;
    virtual int64_t positions() const = 0;  // given out so far
  };
  virtual std::unique_ptr<Stream> stream() const;
};

// CTC's targets of a batch: each row's tgt_out up to its <eos>, padded with the blank (the
// padding id, which no target holds) to L = max(T - 1, 1) labels, in the graph's arena.
struct CtcTargets {
  std::span<const int32_t> labels;   // [B, L]
  std::span<const int32_t> lengths;  // [B]
};
CtcTargets ctc_targets(Graph& g, const Seq2SeqBatch& b);

// Whether labels can be aligned to `positions` frames at all: CTC needs a frame per label and
// a blank between two equal neighbours (Graves et al. 2006, §4.1).
bool ctc_alignable(int64_t positions, std::span<const int32_t> labels);

// How a model can decode while its source is still arriving (heed translate --online, Ma et
// al. 2019's READ/WRITE view): every policy writes an output token from a source prefix whose
// encoding no later token changes (a unidirectional encoder), so that decoding online writes
// what decoding the whole source does.
struct OnlinePolicy {
  enum class Kind {
    ReadAll,    // the model needs the whole source: read it all, then write
    WaitK,      // output i (from 0) after reading min(i + k, |x|) tokens
    Monotonic,  // hard monotonic attention: read until the decoder stops on a token read
  };
  Kind kind = Kind::ReadAll;
  int64_t k = 0;       // WaitK's k
  std::string reason;  // ReadAll: why ("a bidirectional encoder", ...)
};

// A recognizer whose attention decoder reads its audio as it comes: hard monotonic attention and
// MoChA (Raffel et al. 2017, Algorithm 1; Chiu & Raffel 2018) write output i once the attention
// stops on a position already heard, and wait for more audio when it runs past them. push()
// takes feature frames [n, F] and gives the tokens they let the decoder write; finish() ends the
// utterance and gives the rest, up to </s> (or the length limit: a token per position and
// `slack` more, as offline recognition's; a token past the positions heard waits). With a
// causal encoder each position is encoded once (nn/audio_encoder_stream.h), and the tokens are
// greedy decoding's of the whole utterance by attention alone (a joint CTC-attention model's CTC
// unused).
// Linear time, flat memory: each position's keys are made once, when heard, and monotonic
// attention never reads behind its last stop's chunk, so the positions before it are let go.
// Segments (`endpoint` > 0 positions): a long stream holds many utterances, and a decoder
// trained on one writes </s> after the first. A segment ends when its decoder writes </s> before
// the audio ends, or once `endpoint` positions were heard past its last unit's stop (the
// attention scanned them and stopped nowhere, or stayed put while the decoder wrote on: the
// endpoint of CTC's blank run, in attention's terms; the step waiting is taken to be its </s>);
// a new decoder starts on the positions after it, the listener goes on. Each segment ends with
// a </s> token. With an endpoint the positions are taken one at a time: the segments do not
// depend on the pieces.
// Wait-k on audio (Ma, Pino & Koehn 2020) streams the same way: output i once the first (i + k)
// chunks of positions are heard (its attention reads the segment's whole prefix, which it keeps).
// Seq2SeqModel::attention_stream is an Error for a model that cannot (soft attention over the
// whole utterance, a bidirectional encoder, text in).
// The position a step's attention weights [S] point at: the largest weight's (a hard
// monotonic stop; MoChA's chunk ends there), or the last one when every weight is 0 (a monotonic
// step that ran off the audio's end: it read it all and stopped nowhere). What a unit's time
// and its mark on the page are.
int64_t attended_position(std::span<const float> weights);

class AttentionStream {
 public:
  struct Token {
    int32_t id = 0;      // Vocab::kEos: the segment ends (`stop`: its last position)
    int64_t stop = 0;    // the encoder position its attention points at, from the stream's
                         // start (40 ms each; attended_position)
    int64_t heard = 0;   // encoder positions heard when it was written
    float log_prob = 0;  // log p(token | the tokens before, the audio heard); a segment's end
                         // forced by the endpoint: 0
  };
  virtual ~AttentionStream() = default;
  virtual std::vector<Token> push(std::span<const float> features) = 0;
  virtual std::vector<Token> finish() = 0;
  virtual int64_t positions() const = 0;  // encoder positions heard so far
  virtual int64_t held() const = 0;       // positions the memory holds now
};

class Seq2SeqModel {
 public:
  virtual ~Seq2SeqModel() = default;
  virtual int64_t tgt_vocab() const = 0;
  virtual bool reverse_source() const { return false; }
  // The longest output it can produce (the Transformer: its position table); search stops there.
  virtual int64_t max_output_len() const { return INT64_MAX; }
  virtual DecoderHeads decoder_heads() const { return {}; }
  // An alignment-free model's scores (CTC), or nullptr: an encoder-decoder.
  virtual const FrameLabeller* frame_labeller() const { return nullptr; }
  virtual OnlinePolicy online_policy() const { return {.reason = "soft attention"}; }
  // A recognizer's attention decoder over audio as it comes.
  virtual std::unique_ptr<AttentionStream> attention_stream(int64_t slack,
                                                            int64_t endpoint = 0) const;
  // Whether decoding attends by hard monotonic stops (monotonic attention, MoChA): each row of
  // the weights then ends at the step's stop (the pictures outline it).
  virtual bool hard_monotonic_attention() const { return false; }
  // The latent trees syntactic attention induces over each text source of `batch`
  // (nn/syntactic_attention.h): [B, S + 1, S], p(parent(m) = h) at [b][h][m - 1] with h = 0 the
  // root; an empty tensor when the model has no syntactic attention.
  virtual Tensor source_trees(Graph& /*g*/, const Seq2SeqBatch& /*batch*/) const { return {}; }
  // Teacher-forced cross-entropy over the target tokens (padding ignored).
  virtual Var loss(Graph& g, const Seq2SeqBatch& batch, float label_smoothing = 0.f) const = 0;
  // Encodes batch.src (targets unused) for decoding at most max_len target positions; the
  // decoder keeps its state in `g`, which must outlive it. Its rows are `rows_per_source` per
  // source (row n * rows_per_source + k decodes source n: beam search's K beams), each source
  // encoded once.
  virtual std::unique_ptr<IncrementalDecoder> start_decoding(Graph& g, const Seq2SeqBatch& batch,
                                                             int64_t max_len,
                                                             const AttentionChoice& attention,
                                                             int64_t rows_per_source = 1) const = 0;
};

}  // namespace heed
