// `heed bench asr`: the workloads of ../shared/bench/pytorch/asr_bench.py, printing its JSON
// fields, one line per measurement:
//   asr_fbank       Kaldi's 80-bin filterbanks (data/fbank.h) of `n` utterances of white noise,
//                   2-8 s (uniform), on the 16-bit scale x 3000; all n timed `reps` times after
//                   a warm-up; audio seconds per second (xRT) from the median wall time and from
//                   the median process CPU time
//   asr_ctc_train   the conv x4 front end (32 channels, 80 bins -> d) + 3-layer BiLSTM (320 per
//                   direction) + CTC over 30 characters: Adam 1e-3, clip 5, batches of `batch`
//                   utterances of 2-8 s of N(0, 1) features at 100 frames/s, round(13 s)
//                   labels each; `steps` steps after 2 warm-ups: audio seconds, frames and
//                   labels per second, the median step
//   asr_ctc_greedy  best-path decoding of 5 s utterances at batch 1 and `batch`: the median of
//                   `reps` after 2 warm-ups, as a real-time factor (compute / audio seconds)
//   asr_las_train   Listen, Attend and Spell: the same listener, an LSTM speller of 512 over
//                   embeddings of 128 with location-aware attention (10 filters of width 31,
//                   attention dim 320), trained as ctc on the same batches: audio seconds and
//                   target tokens (characters and <eos>) per second, the median step
//   asr_las_greedy  greedy decoding of a 5 s utterance at batch 1: up to <eos> or 200 steps, or
//                   exactly `las_decode_steps`; RTF and the speller's ms per step (the listener's
//                   time subtracted)
// --only features,ctc,las chooses the parts (as the peer's --only); --precision bfloat16 and
// --compute-type int8 measure heed's mixed-precision training and int8 decoding.
// Leaves out: the peer's pyramidal listener (--encoder pblstm).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "heed/autograd/graph.h"
#include "heed/decode/translator.h"

namespace heed {

struct AsrBenchOptions {
  std::string only = "features,ctc,las";
  int n = 20;  // features: utterances per rep
  int reps = 5;
  int64_t batch = 16;
  int steps = 10;            // timed training steps (after 2 warm-ups)
  int64_t d = 320;           // the front end's output width
  double utt_s = 5.0;        // decoding utterances, seconds
  int las_decode_steps = 0;  // las: exactly this many greedy steps (0: up to <eos>, 200 at most)
  uint64_t seed = 1;
  Precision precision = Precision::fp32;       // training products (--precision)
  ComputeType compute = ComputeType::Float32;  // decoding weights (--compute-type)
};

void run_asr_bench(const AsrBenchOptions& options, std::ostream& out);

}  // namespace heed
