// The shared training loop (see the header).
// Leaves out: multi-process data loading (the shared datasets fit in memory many times over).
#include "heed/train/loop.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "heed/dist/communicator.h"
#include "heed/io/files.h"
#include "heed/io/model_dir.h"
#include "heed/kernels/flops.h"
#include "heed/kernels/random.h"
#include "heed/train/batching.h"
#include "heed/train/checkpoint.h"
#include "heed/train/gradient_sync.h"
#include "heed/train/optimizer.h"
#include "heed/util/clock.h"
#include "heed/util/error.h"
#include "heed/util/json.h"

namespace fs = std::filesystem;

namespace heed {

namespace {

using Clock = std::chrono::steady_clock;

std::string checkpoint_dir(const LoopOptions& o) {
  return (fs::path(o.save_dir) / "checkpoint").string();
}

// epochs/epoch_K.safetensors for the epoch just finished; the one --keep-epochs before it goes.
void keep_epoch_weights(const LoopOptions& o, const ParameterStore& params, int64_t epoch) {
  const fs::path dir = fs::path(o.save_dir) / "epochs";
  fs::create_directories(dir);
  auto file = [&](int64_t k) { return dir / ("epoch_" + std::to_string(k) + ".safetensors"); };
  save_weights(file(epoch).string(), params);
  if (epoch > o.keep_epochs) fs::remove(file(epoch - o.keep_epochs));
}

}  // namespace

nlohmann::json data_fingerprints(std::initializer_list<std::string> files) {
  nlohmann::json prints = nlohmann::json::object();
  for (const std::string& f : files)
    if (!f.empty()) prints[f] = file_fingerprint(f);
  return prints;
}

bool resuming(const LoopOptions& o) {
  return o.resume && has_checkpoint(checkpoint_dir(o));
}

namespace {
// --resume continues the run of the checkpoint: the same data, seed and model config, or an
// Error listing what differs (now, and in the checkpoint) unless --force-resume. Checkpoints
// older than this check keep no seed or data: those parts are not compared.
void check_same_run(const LoopOptions& o, const nlohmann::json& config,
                    const nlohmann::json& saved_config, const nlohmann::json& extra,
                    const std::string& ckpt) {
  std::string diff;
  auto differs = [&](const std::string& what, const nlohmann::json& now,
                     const nlohmann::json& then) {
    diff += "\n  " + what + ": " + now.dump() + " (the checkpoint: " + then.dump() + ")";
  };
  if (extra.contains("seed") && extra["seed"] != std::to_string(o.seed))
    differs("--seed", std::to_string(o.seed), extra["seed"]);
  if (extra.contains("data"))
    for (const auto& [key, value] : o.data.items()) {
      const nlohmann::json then = extra["data"].value(key, nlohmann::json());
      if (key == "fingerprints") {  // per file; checkpoints older than them are not compared
        if (!then.is_object()) continue;
        for (const auto& [file, print] : value.items())
          if (then.value(file, nlohmann::json()) != print)
            differs(file + "'s content (size:hash)", print, then.value(file, nlohmann::json()));
      } else if (then != value) {
        differs(key, value, then);
      }
    }
  for (const auto& [key, value] : config.items())
    if (saved_config.value(key, nlohmann::json()) != value)
      differs(key, value, saved_config.value(key, nlohmann::json()));
  if (diff.empty()) return;
  check(o.force_resume, "--resume from ", ckpt, ": this run differs from the checkpoint's:", diff,
        "\n--force-resume continues anyway; --overwrite starts over");
}

// train.jsonl as of a checkpoint at `step`: the records of later steps (written before a kill,
// and written again as the resumed run replays those steps) and a torn last line are dropped,
// so the log keeps one record per event across kills. Rewritten atomically when it changes.
void trim_training_log(const std::string& path, int64_t step) {
  if (!fs::exists(path)) return;
  const std::string text = read_file(path);
  std::string kept;
  size_t start = 0;
  bool changed = false;
  for (int64_t n = 1; start < text.size(); ++n) {
    size_t end = text.find('\n', start);
    const bool torn = end == std::string::npos;  // no newline: a write cut short
    if (torn) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    const bool record = j.is_object() && j.contains("step") && j["step"].is_number();
    check(record || torn || start >= text.size(), path, ":", n,
          ": not a training record (a run killed while writing leaves only the last line torn)");
    if (!record || j["step"].get<double>() > static_cast<double>(step)) {
      changed = true;
      continue;
    }
    kept += line + '\n';
  }
  if (changed) write_file_atomic(path, kept);
}
}  // namespace

namespace {
bool prepare_save_dir_here(const LoopOptions& o, std::optional<DirLock>& lock) {
  check(!o.save_dir.empty(), "train: --save DIR is required");
  check(!(o.resume && o.overwrite), "train: --resume and --overwrite exclude each other");
  const fs::path dir(o.save_dir);
  check(!fs::exists(dir) || fs::is_directory(dir), o.save_dir, ": not a directory");
  lock.emplace(o.save_dir, "train");  // before anything in it is read or removed
  // what a run writes: what it has learned (a directory with any of these holds a run), then
  // what it derives from the data again (vocabularies, SentencePiece models, config.json)
  const char* learned[] = {"model.safetensors", "train.jsonl",    "checkpoint",
                           "checkpoint.old",    "checkpoint.tmp", "epochs"};
  const char* derived[] = {"config.json", "src.vocab", "tgt.vocab",
                           "src.spm",     "tgt.spm",   "run.json"};
  std::string held;
  bool saved = false;  // anything the run kept: a model, a checkpoint, an epoch's weights
  for (const char* f : learned)
    if (fs::exists(dir / f)) {
      held += (held.empty() ? "" : ", ") + std::string(f);
      saved =
          saved || (std::strcmp(f, "train.jsonl") != 0 && std::strcmp(f, "checkpoint.tmp") != 0);
    }
  const bool resumes = resuming(o);
  if (!held.empty() && !resumes) {
    // a run killed before its first checkpoint was complete has saved nothing: --resume starts
    // it over (its log holds steps no checkpoint kept); one that saved something is refused
    check(!o.resume || !saved, o.save_dir, " holds a run (", held,
          ") but no checkpoint to resume from; --overwrite starts over, replacing it");
    if (o.resume)
      std::fprintf(stderr, "%s: a run killed before its first checkpoint (%s): started over\n",
                   o.save_dir.c_str(), held.c_str());
    check(o.overwrite || o.resume, o.save_dir, " already holds a run (", held,
          "); --resume continues its training, --overwrite starts over, replacing it");
    for (const char* f : learned) fs::remove_all(dir / f);
    for (const char* f : derived) fs::remove_all(dir / f);
  }
  fs::create_directories(dir);
  return resumes;
}
}  // namespace

// Data-parallel: rank 0 prepares the directory; the others wait for it and take its answer.
SaveDir prepare_save_dir(const LoopOptions& o) {
  dist::Communicator& comm = dist::world();
  SaveDir s;
  s.resumes = comm.root() && prepare_save_dir_here(o, s.lock);
  s.resumes = dist::agree(comm, s.resumes);
  return s;
}

namespace {
// Rank `rank`'s share of a global batch of `ranks`: every ranks-th example from its r-th.
// A batch is sorted by length (train/batching.h), so contiguous parts would give the last rank
// the longest sentences and the others the wait; interleaved, the shares cost about the same.
void share(std::span<const size_t> batch, int rank, int ranks, std::vector<size_t>& mine) {
  mine.clear();
  for (size_t i = static_cast<size_t>(rank); i < batch.size(); i += static_cast<size_t>(ranks))
    mine.push_back(batch[i]);
}
}  // namespace

namespace {

// One run of the loop, in its named stages: set up (the optimiser, schedule and batching of
// the options), resume from the checkpoint, announce, then epochs of steps with their progress
// lines, validations and checkpoints, and the result. What the stages share is its members.
class TrainingRun {
 public:
  TrainingRun(const LoopOptions& o, const TrainingTask& task, ParameterStore& params,
              const nlohmann::json& config, std::ostream& log)
      : o_(o),
        task_(task),
        params_(params),
        config_(config),
        log_(log),
        comm_(dist::world()),
        ranks_(comm_.size()),
        root_(comm_.root()),
        ckpt_(checkpoint_dir(o)),
        opt_({.kind = o.adadelta           ? OptimizerConfig::Kind::Adadelta
                      : o.weight_decay > 0 ? OptimizerConfig::Kind::AdamW
                                           : OptimizerConfig::Kind::Adam,
              .beta2 = o.adam_beta2,
              .weight_decay = o.weight_decay,
              .smoothing = o.smoothing},
             params),
        sched_({.kind = o.schedule,
                .lr = o.lr,
                .warmup = o.warmup,
                .factor = o.lr_decay,
                .patience = o.lr_patience,
                .min_lr = o.lr / 32}),
        lower_better_(task.lower_is_better()),
        sync_(comm_),
        // each step's global batch: what one process with `ranks` times the batch would train
        // on (--batch-tokens when given: --batch then only sizes the sorting window)
        batching_(o.batch_tokens > 0
                      ? BatchOptions{.sentences = o.batch_size, .tokens = o.batch_tokens * ranks_}
                      : BatchOptions{.sentences = o.batch_size * ranks_, .tokens = 0}),
        best_(lower_better_ ? 1e300 : -1e300),
        curve_path_((fs::path(o.save_dir) / "train.jsonl").string()),
        g_(Mode::Train, o.seed),
        // a rank's dropout and sampling streams differ from the others' (rank 0's are one
        // process's)
        rank_stream_(root_ ? 0 : mix64(~static_cast<uint64_t>(comm_.rank()))) {
    result_.metric_name = task.metric_name();
    result_.token_name = task.token_name();
    result_.params = params.numel();
    g_.set_precision(o.precision);
    fit_warmup();
  }

  // LoopOptions::fit_warmup: a tenth of the planned updates (the epochs' batches, at the first
  // epoch's count, or --max-steps if fewer) when the family's warmup is more than that.
  void fit_warmup() {
    warmup_ = o_.warmup;
    if (!o_.fit_warmup || o_.warmup <= 0 || o_.measure) return;
    const auto per_epoch = static_cast<int64_t>(
        epoch_batches(task_.lengths(), task_.costs(), batching_, o_.seed, 0).size());
    int64_t planned = per_epoch * std::max(o_.epochs, 1);
    if (o_.max_steps > 0) planned = std::min(planned, o_.max_steps);
    const int64_t fitted = std::max<int64_t>(1, planned / 10);
    if (fitted >= o_.warmup) return;
    warmup_ = fitted;
    ScheduleConfig c = sched_.config();
    c.warmup = fitted;
    sched_ = LrSchedule(c);
    log_ << "warmup: " << fitted << " updates, a tenth of the " << planned
         << " planned (the family's " << o_.warmup << " would take "
         << (o_.warmup >= planned ? std::string("the whole run")
                                  : std::to_string(100 * o_.warmup / planned) + "% of it")
         << "; --warmup N sets it)\n";
  }

  // The checkpoint's state, when resuming: weights, optimiser, schedule, the best metric, the
  // position in the epoch (moved to the same share of it under another global batch).
  void resume() {
    if (!resuming(o_)) return;
    state_ = load_checkpoint(ckpt_, params_, opt_);  // every rank: the directory is shared
    check_same_run(o_, config_, state_.config, state_.extra, ckpt_);
    if (root_) trim_training_log(curve_path_, state_.step);
    // the warmup the run started with, though a larger budget would fit another (older
    // checkpoints: the options')
    const int64_t warmup = state_.extra.value("warmup", warmup_);
    if (warmup != warmup_) {
      log_ << "warmup: " << warmup << " updates, as the run began (fitted to its budget then)\n";
      warmup_ = warmup;
      ScheduleConfig c = sched_.config();
      c.warmup = warmup;
      sched_ = LrSchedule(c);
    }
    sched_.load_state(state_.schedule);
    best_ = state_.extra.at("best").get<double>();
    best_step_ = state_.extra.value("best_step", int64_t{0});  // absent from older checkpoints
    bad_epochs_ = json_integer<int>(state_.extra, "bad_epochs", ckpt_ + "/trainer_state.json");
    minutes_before_ = state_.extra.value("minutes", 0.0);  // absent from older checkpoints
    if (state_.data_position > 0 && state_.extra.contains("loss_avg")) {
      loss_avg_ = state_.extra["loss_avg"].get<double>();
      continue_avg_ = true;
    }
    log_ << "resuming from " << ckpt_ << ": epoch " << state_.epoch + 1 << ", batch "
         << state_.data_position << ", step " << state_.step << ", " << minutes_before_
         << " min trained\n"
         << std::flush;
    // resumed with another global batch (another number of ranks or --batch): the epoch's
    // batches are drawn anew, and it goes on from the same share of them
    const nlohmann::json was = state_.extra.value("global_batch", nlohmann::json());
    const nlohmann::json now = {batching_.sentences, batching_.tokens};
    if (state_.data_position > 0 && was.is_array() && was != now) {
      auto count = [&](const BatchOptions& b) {
        return epoch_batches(task_.lengths(), task_.costs(), b, o_.seed, state_.epoch).size();
      };
      const size_t before =
                       count({.sentences = was[0].get<int64_t>(), .tokens = was[1].get<int64_t>()}),
                   after = count(batching_);
      const int64_t position = static_cast<int64_t>(
          static_cast<double>(state_.data_position) * static_cast<double>(after) /
          static_cast<double>(std::max<size_t>(before, 1)));
      log_ << "the checkpoint's global batch was " << was.dump() << " (sentences, tokens), now "
           << now.dump() << " (" << ranks_ << " rank(s)): epoch " << state_.epoch + 1
           << " goes on from batch " << position << " of " << after << " (it was at "
           << state_.data_position << " of " << before << ")\n";
      state_.data_position = position;
    }
  }

  // The replicas checked equal; what the run does that the log should say; train.jsonl opened.
  void announce() {
    check_replicas_agree(comm_, params_, "at the start");
    if (ranks_ > 1)
      log_ << "data-parallel: " << ranks_ << " ranks, each step a global batch of "
           << (o_.batch_tokens > 0 ? std::to_string(batching_.tokens) + " padded positions"
                                   : std::to_string(batching_.sentences) + " examples")
           << " split across them\n";
    if (o_.smoothing > 0)
      log_ << "exponential smoothing " << o_.smoothing
           << ": validation, the best model and kept epochs use the weights' moving average\n";
    if (o_.precision == Precision::bf16)
      log_ << "mixed precision: the products of the linear layers and recurrent cells in "
              "bfloat16, sums and weights in float32\n";
    if (root_) {
      curve_.open(curve_path_, std::ios::app);
      check(curve_.good(), curve_path_, ": cannot open for appending (", std::strerror(errno), ")");
    }
  }

  // A new run keeps its step-0 state before it trains, so that a run killed at any moment
  // (even while saving its first best model) leaves a checkpoint --resume continues from.
  void first_checkpoint() {
    if (!o_.measure && !resuming(o_)) save_state(0, 0);
  }

  // Every epoch from the checkpoint's until --epochs, the budget or early stopping.
  void epochs() {
    start_step_ = state_.step;
    for (int64_t epoch = state_.epoch; epoch < o_.epochs && !out_of_time_; ++epoch)
      if (!run_epoch(epoch)) break;
  }

  LoopResult finish() {
    if (out_of_time_ && state_.step == start_step_)
      log_ << "the time or step budget is used up: nothing trained (a larger --max-steps or "
              "--max-minutes with --resume continues)\n";
    else if (out_of_time_ && !o_.measure)
      log_ << "stopped by the time or step budget; --resume continues\n";
    if (!o_.measure && warmup_ > 0 && state_.step < warmup_)
      log_ << "warning: training ended inside its warmup (step " << state_.step << " of " << warmup_
           << "): the learning rate never reached --lr; a --warmup that fits the "
           << "run (a few per cent of its updates), or a larger budget\n";
    if (ranks_ > 1 && result_.run_steps > 0)
      log_ << "data-parallel: rank 0 spent " << result_.comm_seconds << " s of "
           << result_.step_seconds << " s of training steps in collectives ("
           << 1000 * result_.comm_seconds / static_cast<double>(result_.run_steps)
           << " ms per step: waiting for the other ranks and summing gradients)\n";
    result_.best_metric = best_;
    result_.best_step = best_step_;
    result_.steps = state_.step;
    result_.minutes = minutes();
    return result_;
  }

 private:
  // Training time in minutes, over all runs of this model (a resumed run adds to the minutes
  // its checkpoint recorded): what --max-minutes bounds and train.jsonl's curves are against.
  double minutes() const {
    return minutes_before_ + std::chrono::duration<double>(Clock::now() - t0_).count() / 60.0;
  }

  // What validation sees and the saved models hold: the smoothed weights when there are any
  // (swapped in for the call, out after it; every rank, so that the replicas stay equal).
  template <class F>
  void with_smoothed(F&& f) {
    if (o_.smoothing > 0) opt_.swap_smoothed();
    f();
    if (o_.smoothing > 0) opt_.swap_smoothed();
  }

  // The share of the training budget spent, whichever of --max-minutes, --max-steps and
  // --epochs runs out first: the clock of the cooldown (schedule.h). `done` batches of epoch
  // `epoch`.
  double budget_spent(int64_t epoch, int64_t done, size_t epoch_batches) {
    double p =
        (static_cast<double>(epoch) +
         static_cast<double>(done) / static_cast<double>(std::max<size_t>(epoch_batches, 1))) /
        std::max(o_.epochs, 1);
    if (o_.max_minutes > 0) p = std::max(p, minutes() / o_.max_minutes);
    if (o_.max_steps > 0) p = std::max(p, static_cast<double>(state_.step) / o_.max_steps);
    return ranks_ > 1 && o_.max_minutes > 0 ? dist::agree(comm_, p) : p;  // rank 0's clock
  }

  // The rate of the next update.
  double rate() const { return sched_.lr(state_.step + 1) * cooldown_factor(spent_, o_.cooldown); }

  // The time or step budget used up (counted over a run and its resumptions).
  bool exhausted() {
    const bool out = (o_.max_minutes > 0 && minutes() >= o_.max_minutes) ||
                     (o_.max_steps > 0 && state_.step >= o_.max_steps);
    return ranks_ > 1 && o_.max_minutes > 0 ? dist::agree(comm_, out) : out;  // rank 0's clock
  }

  void save_state(int64_t epoch, int64_t position) {
    check_replicas_agree(comm_, params_, "at step " + std::to_string(state_.step));
    if (!root_) return;
    state_.epoch = epoch;
    state_.data_position = position;
    state_.schedule = sched_.state();
    state_.extra = {{"best", best_},
                    {"best_step", best_step_},
                    {"bad_epochs", bad_epochs_},
                    {"minutes", minutes()},
                    {"seed", std::to_string(o_.seed)},
                    {"data", o_.data},
                    {"loss_avg", loss_avg_},
                    {"global_batch", {batching_.sentences, batching_.tokens}},
                    {"ranks", ranks_},
                    {"warmup", warmup_}};
    save_checkpoint(ckpt_, config_, params_, opt_, state_);
  }

  // Validation: dev cross-entropy and metric, the best model saved. At the end of an epoch also
  // the schedule and early stopping; a validation inside an epoch (--valid-every, or a stop)
  // leaves them alone, so that a resumed run continues exactly.
  void validate_and_record(int64_t epoch, bool epoch_done, double loss_avg, bool record = true) {
    TrainingTask::Validation v;
    bool better = false;
    with_smoothed([&] {
      if (root_) v = task_.validate();
      if (ranks_ > 1) {  // the others decide on rank 0's figures
        v.ce = dist::agree(comm_, v.ce);
        v.metric = dist::agree(comm_, v.metric);
      }
      better = lower_better_ ? v.metric < best_ : v.metric > best_;
      if (better) {
        best_ = v.metric;
        best_step_ = state_.step;
        if (root_) save_model(o_.save_dir, config_, params_);
      }
    });
    if (epoch_done) {
      bad_epochs_ = better ? 0 : bad_epochs_ + 1;
      sched_.report(v.ce);
    }
    const double ppl = std::exp(v.ce);
    char line[200];
    std::snprintf(line, sizeof line,
                  "validation  epoch %lld  step %lld  dev ce %.4f  ppl %.2f  %s %.2f%s  lr %.2e  "
                  "(%.1f min)\n",
                  static_cast<long long>(epoch) + 1, static_cast<long long>(state_.step), v.ce, ppl,
                  result_.metric_name.c_str(), v.metric, better ? "  (best, saved)" : "", rate(),
                  minutes());
    log_ << line << std::flush;
    if (!record || !root_) return;
    curve_ << nlohmann::json{{"epoch", epoch + 1},
                             {"step", state_.step},
                             {"minutes", minutes()},
                             {"dev_ce", v.ce},
                             {"dev_ppl", ppl},
                             {"metric", result_.metric_name},
                             {"dev_metric", v.metric},
                             {"train_loss", loss_avg},
                             {"lr", rate()}}
                  .dump()
           << "\n"
           << std::flush;
    check(curve_.good(), curve_path_, ": write failed (", std::strerror(errno), ")");
  }

  // A training-step record in train.jsonl (no dev_ce: heed report tells it from a validation's):
  // the loss's moving average, the rate of the next update, the last gradient's norm, the
  // epoch's tokens per second so far.
  void record_step(int64_t epoch, double tokens_per_s) {
    curve_ << nlohmann::json{{"epoch", epoch + 1},
                             {"step", state_.step},
                             {"minutes", minutes()},
                             {"train_loss", loss_avg_},
                             {"lr", rate()},
                             {"grad_norm", std::isfinite(last_norm_) ? last_norm_ : -1.0},
                             {"tokens_per_s", tokens_per_s}}
                  .dump()
           << "\n"
           << std::flush;
    check(curve_.good(), curve_path_, ": write failed (", std::strerror(errno), ")");
  }

  // One update on this rank's share of global batch `batch`: its loss, the gradients summed
  // over the ranks, clipped and applied. The global batch's mean loss and tokens.
  std::pair<double, int64_t> step(const std::vector<size_t>& batch) {
    const auto step_start = Clock::now();
    const double flops_before = kernels::product_flops();
    g_.reseed(o_.seed ^ mix64(static_cast<uint64_t>(state_.step)) ^ rank_stream_);
    const double comm_before = comm_.seconds();
    // this rank's share of the global batch (all of it in one process)
    share(batch, comm_.rank(), ranks_, mine_);
    TrainingTask::BatchLoss b{};
    if (!mine_.empty()) b = task_.loss(g_, mine_, state_.step);
    double l = mine_.empty() ? 0 : b.loss.value().data()[0];
    // the global batch's mean loss: the ranks' means weighed by their shares of its weight
    double share_of_loss = 1;
    if (ranks_ > 1) {
      double sums[3] = {l * b.weight, b.weight, static_cast<double>(b.tokens)};
      comm_.allreduce_sum(sums);
      l = sums[0] / sums[1];
      share_of_loss = b.weight / sums[1];
      b.tokens = static_cast<int64_t>(sums[2]);
    }
    // a NaN or infinite loss poisons every weight at the next update: stop before it, with the
    // checkpoint and best model as they were
    check(std::isfinite(l), "training: the loss is ", l, " at step ", state_.step + 1,
          " (a learning rate too high?); nothing of this step was saved: the checkpoint in ", ckpt_,
          " and the best model are as they were");
    if (!mine_.empty()) g_.backward(b.loss);
    sync_.reduce(params_, static_cast<float>(share_of_loss));  // the global batch's gradient
    const double norm = grad_norm(params_);
    last_norm_ = norm;
    if (std::isfinite(norm)) {
      opt_.step(rate(), clip_scale(norm, o_.clip));  // clipped inside the update
      skipped_in_a_row_ = 0;
    } else {
      // an overflowed gradient would turn every weight to NaN (clipping scales inf to 0 x inf):
      // the update is skipped, as fairseq and ESPnet do, and said; a run that keeps overflowing
      // stops with its checkpoint as it was (every rank sees the same summed norm)
      skip_update(norm);
    }
    g_.clear();
    ++state_.step;
    result_.run_steps += 1;
    result_.run_tokens += b.tokens;
    result_.step_seconds += std::chrono::duration<double>(Clock::now() - step_start).count();
    result_.step_flops += kernels::product_flops() - flops_before;
    result_.comm_seconds += comm_.seconds() - comm_before;
    return {l, b.tokens};
  }

  // A step whose gradient is not finite: no update, its gradients cleared, the parameter that
  // overflowed first named on the log; 20 such steps in a row end the run.
  void skip_update(double norm) {
    std::string first, last;
    size_t bad = 0;
    for (Parameter* p : params_.all()) {
      if (!std::isfinite(p->grad_sum_squares())) {
        if (first.empty()) first = p->name;
        last = p->name;
        ++bad;
      }
      p->zero_grad();
    }
    ++skipped_in_a_row_;
    ++result_.skipped_updates;
    log_ << "step " << state_.step + 1 << ": the gradient's norm is " << norm << " (in " << bad
         << " of " << params_.all().size() << " parameters, " << first << " to " << last
         << "); update skipped\n"
         << std::flush;
    check(skipped_in_a_row_ < 20,
          "training: 20 steps in a row with a gradient that is not "
          "finite (to step ",
          state_.step + 1,
          "; a learning rate too "
          "high?); the checkpoint in ",
          ckpt_, " is as it was");
  }

  // The progress line: the epoch's batches, the loss's moving average, the rate, time and ETA.
  void progress(int64_t epoch, int64_t k, int64_t first, size_t batches, int64_t tokens,
                double secs) {
    // to the end of the run, by whichever budget ends it first: the epochs left (at this
    // epoch's size), --max-steps, --max-minutes
    const double per_batch = secs / static_cast<double>(k + 1 - first);
    const auto n = static_cast<int64_t>(batches);
    double eta = per_batch * static_cast<double>(n - k - 1 + (o_.epochs - epoch - 1) * n);
    if (o_.max_steps > 0)
      eta = std::min(eta, per_batch * static_cast<double>(o_.max_steps - state_.step));
    if (o_.max_minutes > 0) eta = std::min(eta, 60 * (o_.max_minutes - minutes()));
    char line[200];
    std::snprintf(line, sizeof line,
                  "epoch %lld/%d  batch %lld/%zu  loss %.3f  ppl %.1f  %.0f %s/s  "
                  "elapsed %s  ETA %s\n",
                  static_cast<long long>(epoch) + 1, o_.epochs, static_cast<long long>(k) + 1,
                  batches, loss_avg_, std::exp(loss_avg_), static_cast<double>(tokens) / secs,
                  task_.token_name().c_str(), clock_text(minutes() * 60).c_str(),
                  clock_text(std::max(eta, 0.0)).c_str());
    log_ << line << std::flush;
  }

  // One epoch from the checkpoint's position: its steps (with validations inside it every
  // --valid-every steps and checkpoints), then its validation, kept weights and checkpoint.
  // False when early stopping ends training.
  bool run_epoch(int64_t epoch) {
    auto batches = epoch_batches(task_.lengths(), task_.costs(), batching_, o_.seed, epoch);
    auto epoch_start = Clock::now();
    auto last_print = Clock::now();
    int64_t tokens = 0, first = state_.data_position;
    spent_ = budget_spent(epoch, first, batches.size());
    if (!continue_avg_) loss_avg_ = 0;
    int64_t k = first;
    for (; k < static_cast<int64_t>(batches.size()); ++k) {
      if (exhausted()) {  // checked before a step: a run resumed with its budget spent trains none
        out_of_time_ = true;
        break;
      }
      const auto [l, step_tokens] = step(batches[k]);
      spent_ = budget_spent(epoch, k + 1, batches.size());
      tokens += step_tokens;
      loss_avg_ = k == first && !continue_avg_ ? l : 0.98 * loss_avg_ + 0.02 * l;
      continue_avg_ = false;
      const double secs = std::chrono::duration<double>(Clock::now() - epoch_start).count();
      if (std::chrono::duration<double>(Clock::now() - last_print).count() > 5 ||
          k + 1 == static_cast<int64_t>(batches.size())) {
        last_print = Clock::now();
        progress(epoch, k, first, batches.size(), tokens, secs);
      }
      if (o_.measure) continue;  // nothing validated or written
      if (root_ && o_.log_every > 0 && state_.step % o_.log_every == 0)
        record_step(epoch, static_cast<double>(tokens) / secs);
      if (o_.valid_every > 0 && state_.step % o_.valid_every == 0 &&
          k + 1 < static_cast<int64_t>(batches.size())) {
        auto t = Clock::now();
        validate_and_record(epoch, false, loss_avg_);
        validated_at_ = state_.step;
        save_state(epoch, k + 1);
        epoch_start += Clock::now() - t;  // throughput counts training time only
      } else if (state_.step % o_.checkpoint_every == 0) {
        save_state(epoch, k + 1);
      }
    }
    if (exhausted()) out_of_time_ = true;  // with the epoch's last step
    continue_avg_ = false;                 // the next epoch's average starts afresh
    const bool epoch_done = k >= static_cast<int64_t>(batches.size());
    result_.epochs = static_cast<int>(epoch + 1);
    if (o_.measure) return true;
    // a run that trained nothing here (its budget was spent) re-evaluates, recording nothing;
    // an epoch's end is recorded even when a resumed run had no batch of it left to train; a
    // budget that ran out right after a --valid-every validation is not validated twice
    if (epoch_done || state_.step != validated_at_)
      validate_and_record(epoch, epoch_done, loss_avg_, /*record=*/k > first || epoch_done);
    if (epoch_done && o_.keep_epochs > 0 && root_)
      with_smoothed([&] { keep_epoch_weights(o_, params_, epoch + 1); });
    save_state(epoch_done ? epoch + 1 : epoch, epoch_done ? 0 : k);
    if (bad_epochs_ > o_.patience) {
      log_ << "early stopping: no better dev " << result_.metric_name << " for " << bad_epochs_
           << " epochs\n";
      return false;
    }
    return true;
  }

  const LoopOptions& o_;
  const TrainingTask& task_;
  ParameterStore& params_;
  const nlohmann::json& config_;
  std::ostream& log_;
  // data-parallel: this rank of `ranks`; rank 0 alone validates, logs and writes
  dist::Communicator& comm_;
  const int ranks_;
  const bool root_;
  const Clock::time_point t0_ = Clock::now();
  double minutes_before_ = 0;
  const std::string ckpt_;
  Optimizer opt_;
  LrSchedule sched_;
  int64_t warmup_ = 0;  // the schedule's warmup (LoopOptions::fit_warmup may shorten it)
  const bool lower_better_;
  LoopResult result_;
  GradientSync sync_;
  const BatchOptions batching_;
  TrainerState state_;
  double best_;
  double last_norm_ = 0;   // the last step's gradient norm (before clipping)
  int64_t best_step_ = 0;  // the step whose weights are the best so far
  int bad_epochs_ = 0;
  // the training loss's moving average over the epoch so far (the progress line, train.jsonl);
  // kept in checkpoints, so that a run resumed inside an epoch logs what it would have
  double loss_avg_ = 0;
  bool continue_avg_ = false;  // resumed inside an epoch: the average goes on from the checkpoint
  int64_t validated_at_ = -1;  // the step of this run's last --valid-every validation
  double spent_ = 0;           // the budget's share spent (budget_spent), the cooldown's clock
  const std::string curve_path_;
  std::ofstream curve_;
  Graph g_;
  const uint64_t rank_stream_;
  int64_t start_step_ = 0;
  bool out_of_time_ = false;
  std::vector<size_t> mine_;  // this rank's examples of the step
  int skipped_in_a_row_ = 0;  // updates skipped for a gradient that was not finite
};

}  // namespace

LoopResult run_training(const LoopOptions& o, const TrainingTask& task, ParameterStore& params,
                        const nlohmann::json& config, std::ostream& log) {
  check(!o.save_dir.empty(), "train: --save DIR is required");
  fs::create_directories(o.save_dir);
  TrainingRun run(o, task, params, config, log);
  run.resume();
  run.announce();
  run.first_checkpoint();
  run.epochs();
  return run.finish();
}

}  // namespace heed
