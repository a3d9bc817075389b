// Online (simultaneous) greedy decoding: the source arrives one token at a time and the
// model's policy (models/seq2seq.h, OnlinePolicy) chooses, before each output token, between
// READ (one more source token) and WRITE (the most probable next token, from the prefix read):
//   read-all   read the whole source, then write (what offline decoding does)
//   wait-k     output i (from 0) after min(i + k, |x|) source tokens (Ma et al. 2019)
//   monotonic  write when the decoder's hard monotonic attention (every head of every layer, in
//              monotonic multihead attention) stops on a token already read; READ when one runs
//              off the prefix before the source has ended (Raffel et al. 2017, Algorithm 1, with
//              the memory growing; Ma et al. 2020)
// The encoder is unidirectional, so a prefix's states are those of the whole source and every
// step sees what it would offline: online decoding writes exactly the offline outputs, each
// as early as the policy lets it. After a READ, the decoder encodes the longer prefix and goes
// on from its state (IncrementalDecoder::extend_source; a step that ran off the prefix is taken
// back and taken again): one decoder step per output token, plus the retaken ones; per READ,
// the Transformer's causal encoder steps one position (its per-layer caches kept), the RNN
// encodes the prefix again. A decoder that cannot is restarted on the longer prefix and
// replays the tokens already written (O(|y|) steps per READ; the tokens are fixed).
// Leaves out: beam search online (a beam's prefixes would have to wait for its slowest).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "heed/models/seq2seq.h"

namespace heed {

struct OnlineOutput {
  std::vector<int32_t> tokens;                // before EOS
  std::vector<int64_t> delays;                // per token: source tokens read when written
  std::vector<std::vector<float>> attention;  // [len(tokens) + 1][|x|], the EOS row last
  double log_prob = 0;
};

// `src` the whole source (ids, no BOS/EOS), revealed one token at a time; `write(token,
// delay)` is called as each output token is written (EOS not).
OnlineOutput online_decode(const Seq2SeqModel& model, std::span<const int32_t> src, int64_t max_len,
                           const std::function<void(int32_t, int64_t)>& write = {});

}  // namespace heed
