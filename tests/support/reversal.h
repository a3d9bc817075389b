// Test support: the toy translation task of the model tests, random symbols reversed (or
// copied, for a monotonic task), with lengths drawn uniformly from [lo, hi]; a model trained
// on it and its accuracy.
#pragma once

#include <utility>
#include <vector>

#include "heed/data/vocab.h"
#include "heed/decode/greedy.h"
#include "heed/kernels/random.h"
#include "heed/models/seq2seq.h"
#include "heed/train/optimizer.h"

namespace heed::testing {

// n pairs over symbols Vocab::kSpecials..V-1: source ids -> reversed (or copied) target ids.
inline std::pair<std::vector<std::vector<int32_t>>, std::vector<std::vector<int32_t>>> reversal(
    Rng& rng, int64_t n, int lo, int hi, int32_t V, bool copy = false) {
  std::vector<std::vector<int32_t>> src, tgt;
  for (int64_t i = 0; i < n; ++i) {
    int64_t len = lo + rng.below(hi - lo + 1);
    std::vector<int32_t> s;
    for (int64_t k = 0; k < len; ++k)
      s.push_back(static_cast<int32_t>(Vocab::kSpecials + rng.below(V - Vocab::kSpecials)));
    src.push_back(s);
    if (copy)
      tgt.push_back(s);
    else
      tgt.emplace_back(s.rbegin(), s.rend());
  }
  return {src, tgt};
}

// Trains `model` (its parameters in `store`) for `steps` Adam updates on fresh batches of 32
// pairs (lengths 2..6, V = 12), clipping gradients to `clip`; the rate is lr(step).
template <class Rate>
void train_reversal(const Seq2SeqModel& model, ParameterStore& store, Rng& rng, int steps,
                    float clip, Rate lr, bool copy = false) {
  Optimizer opt({}, store);
  Graph g;
  for (int step = 0; step < steps; ++step) {
    auto [src, tgt] = reversal(rng, 32, 2, 6, 12, copy);
    Seq2SeqBatch b = make_batch(src, tgt, false);
    b.step = step;  // (schedules inside a model)
    Var loss = model.loss(g, b);
    g.backward(loss);
    clip_grad_norm(store, clip);
    opt.step(lr(step));
    g.clear();
  }
}

// The share of 200 new pairs (seed 99) that greedy decoding gets exactly right.
inline double reversal_accuracy(const Seq2SeqModel& model, bool copy = false) {
  Rng test_rng(99);
  auto [src, tgt] = reversal(test_rng, 200, 2, 6, 12, copy);
  auto hyp = greedy_decode(model, make_batch(src, tgt, false), 10);
  int right = 0;
  for (size_t i = 0; i < hyp.size(); ++i) right += hyp[i].tokens == tgt[i];
  return right / 200.0;
}

}  // namespace heed::testing
