// The training loop every task of heed shares (translation, G2P, classification): epochs of
// length-bucketed batches (train/batching.h), Adam with gradient clipping and a learning-rate
// schedule, a progress line (loss, throughput, elapsed, ETA), validation every epoch (or every
// N steps; of the weights' moving average with smoothing) with the best model saved, early
// stopping, the last epochs' weights kept for averaging, atomic checkpoints and an exact resume. A
// task supplies the data and the model: the loss of a batch of example indices, and a validation
// (dev cross-entropy and its metric). Files written in the model directory: model.safetensors +
// config.json (the best weights), checkpoint/ (the latest state), train.jsonl (one line per
// validation), epochs/. Leaves out: reading data and building models (the tasks: train/trainer.h,
// train/classifier_trainer.h).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "heed/autograd/graph.h"
#include "heed/autograd/parameter.h"
#include "heed/io/dir_lock.h"
#include "heed/train/schedule.h"

namespace heed {

struct LoopOptions {
  int64_t batch_size = 64;   // examples per batch
  int64_t batch_tokens = 0;  // > 0: batches of at most this many padded positions instead
  int epochs = 10;
  double max_minutes = 0;  // stop after this much training time, resumptions included (0: none)
  int64_t max_steps = 0;   // stop after this many updates in total (0: no limit)
  float lr = 1e-3f;        // Adam (the peak rate with a warmup)
  float adam_beta2 = 0.999f;
  float weight_decay = 0.f;  // > 0: AdamW, p -= lr wd p decoupled (Loshchilov & Hutter 2019)
  bool adadelta = false;     // Adadelta (Zeiler 2012; Kim 2014's choice) instead of Adam; lr 1
  // > 0: validation, the best model and kept epochs use the weights' exponential moving average
  // (OptimizerConfig::smoothing); training goes on with the weights themselves
  float smoothing = 0.f;
  // ReduceOnPlateau (on dev cross-entropy, per epoch) or InverseSqrt (with `warmup`)
  ScheduleConfig::Kind schedule = ScheduleConfig::Kind::ReduceOnPlateau;
  int64_t warmup = 0;  // steps of linear warmup to lr
  // the warmup is the family's default (--warmup not given): a run planned for fewer than ten
  // times its updates (--epochs, --max-steps) warms up over a tenth of them instead, as recipes
  // size warmups to their runs (a 4,000-update warmup in a 4,500-update run never trains at lr)
  bool fit_warmup = false;
  // > 0: the last this share of the budget decays the rate linearly to 0 (cooldown_factor); the
  // budget is whichever of max_minutes, max_steps and epochs runs out first
  double cooldown = 0;
  float lr_decay = 0.5f;  // plateau: the LR is multiplied by this when dev cross-entropy stalls
  int lr_patience = 0;    // ... for more than this many epochs in a row
  float clip = 1.0f;      // global gradient-norm clipping
  int patience = 3;       // early stopping: epochs without a better dev metric
  int64_t checkpoint_every = 1000;  // steps between checkpoints (and at every epoch end)
  int64_t valid_every = 0;          // also validate every N steps inside epochs (0: epoch ends)
  int64_t log_every = 100;          // a training-step record in train.jsonl every N steps (0: none)
  int keep_epochs = 0;  // keep the weights of the last N epochs in epochs/ (for heed average)
  uint64_t seed = 1;
  Precision precision = Precision::fp32;  // of the training graph's linear() products
  std::string save_dir;
  bool resume = false;        // continue from save_dir/checkpoint
  bool overwrite = false;     // start over in a save_dir that holds a run (its files removed)
  bool force_resume = false;  // resume even when the run differs from the checkpoint's
  // Speed measurement (heed train --bench): the training steps alone, no validation and no
  // checkpoint, model or kept epoch written; LoopResult's counts say how fast they ran
  bool measure = false;
  // Where the command line sends the log (cli/train.cc): a file it is also appended to, and
  // whether stderr gets none of it
  std::string log_file;
  bool quiet = false;
  // What the run trains on (files, sizes; the tasks fill it in): kept in the checkpoint, and
  // --resume refuses a run whose data, seed or model config differ from the checkpoint's
  nlohmann::json data = nlohmann::json::object();
};

// What a task gives the loop. Examples are numbered 0..N-1 in the order of lengths().
class TrainingTask {
 public:
  virtual ~TrainingTask() = default;
  // Per example: the length batches are sorted by, and its cost in padded positions.
  virtual std::span<const int64_t> lengths() const = 0;
  virtual std::span<const int64_t> costs() const = 0;
  struct BatchLoss {
    Var loss;        // [] mean loss of the batch
    int64_t tokens;  // what the progress line counts per second
    // what the mean is over (target tokens, sentences): data-parallel training weighs each
    // rank's gradient by its share of the global batch's (train/gradient_sync.h)
    double weight;
  };
  // the loss of one batch at training step `step` (0 first; for schedules inside a model)
  virtual BatchLoss loss(Graph& g, std::span<const size_t> examples, int64_t step) const = 0;
  struct Validation {
    double ce = 0;      // dev cross-entropy (drives the plateau schedule)
    double metric = 0;  // the task metric (selects the best model and early stopping)
  };
  virtual Validation validate() const = 0;
  virtual std::string metric_name() const = 0;  // "BLEU", "WER", "acc"
  virtual bool lower_is_better() const = 0;
  virtual std::string token_name() const = 0;  // "tgt tok", "tok"
};

struct LoopResult {
  double best_metric = 0;
  std::string metric_name;
  int64_t steps = 0;
  int64_t best_step = 0;  // the step of the best validation (the weights saved)
  int epochs = 0;
  double minutes = 0;
  // this run's training steps alone (not validation or checkpoints): their count, the tokens
  // they trained on (the task's token_name), their seconds and their products' FLOPs
  // (kernels/flops.h)
  int64_t run_steps = 0;
  int64_t run_tokens = 0;
  double step_seconds = 0;
  double step_flops = 0;
  std::string token_name;
  int64_t params = 0;           // the model's parameter count
  double comm_seconds = 0;      // this rank's seconds inside collectives during the steps
  int64_t skipped_updates = 0;  // steps whose gradient was not finite (no update made)
};

// LoopOptions::data's "fingerprints": each named file's size and content hash
// (io/files.h file_fingerprint), so that --resume refuses data changed under the same name.
nlohmann::json data_fingerprints(std::initializer_list<std::string> files);

// True when `o.resume` and save_dir holds a checkpoint to resume from.
bool resuming(const LoopOptions& o);
// The model directory made ready for a run: created if missing. One that already holds a run
// (a model, a checkpoint, train.jsonl) is continued with --resume when its checkpoint is
// there, emptied of that run's files with --overwrite, and otherwise refused with an Error
// naming it and both flags: a trained model is never replaced by accident. A run killed before
// its first checkpoint (train.jsonl and a partial checkpoint.tmp, nothing saved) is started
// over by --resume. The directory is locked for the run's life (io/dir_lock.h): a second run
// into it fails at once, naming the first's PID. Data-parallel, rank 0 alone holds the lock.
struct SaveDir {
  bool resumes = false;         // the run continues its checkpoint
  std::optional<DirLock> lock;  // held until the run is over (rank 0)
};
SaveDir prepare_save_dir(const LoopOptions& o);

// Trains `params` (the task's model) on `task`; config is the model's config.json.
// Data-parallel (dist::world() of N > 1 ranks, under mpirun): each global batch is the one a
// single process with N times --batch (--batch-tokens) would train on, rank r every N-th
// example of it from the r-th; gradients are summed (train/gradient_sync.h) so every replica makes
// the same update; rank 0 alone validates, logs and writes files, the others reading its decisions.
LoopResult run_training(const LoopOptions& o, const TrainingTask& task, ParameterStore& params,
                        const nlohmann::json& config, std::ostream& log);

}  // namespace heed
