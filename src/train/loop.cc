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
  const char* derived[] = {"config.json", "src.vocab", "tgt.vocab", "src.spm", "tgt.spm"};
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

LoopResult run_training(const LoopOptions& o, const TrainingTask& task, ParameterStore& params,
                        const nlohmann::json& config, std::ostream& log) {
  check(!o.save_dir.empty(), "train: --save DIR is required");
  // data-parallel: this rank of `ranks`; rank 0 alone validates, logs and writes
  dist::Communicator& comm = dist::world();
  const int ranks = comm.size();
  const bool root = comm.root();
  const auto t0 = Clock::now();
  // training time in minutes, over all runs of this model (a resumed run adds to the minutes
  // its checkpoint recorded): what --max-minutes bounds and train.jsonl's curves are against
  double minutes_before = 0;
  auto minutes = [&] {
    return minutes_before + std::chrono::duration<double>(Clock::now() - t0).count() / 60.0;
  };
  fs::create_directories(o.save_dir);
  const std::string ckpt = checkpoint_dir(o);
  Optimizer opt({.kind = o.adadelta           ? OptimizerConfig::Kind::Adadelta
                         : o.weight_decay > 0 ? OptimizerConfig::Kind::AdamW
                                              : OptimizerConfig::Kind::Adam,
                 .beta2 = o.adam_beta2,
                 .weight_decay = o.weight_decay,
                 .smoothing = o.smoothing},
                params);
  // what validation sees and the saved models hold: the smoothed weights when there are any
  // (swapped in for the call, out after it; every rank, so that the replicas stay equal)
  auto with_smoothed = [&](auto&& f) {
    if (o.smoothing > 0) opt.swap_smoothed();
    f();
    if (o.smoothing > 0) opt.swap_smoothed();
  };
  LrSchedule sched({.kind = o.schedule,
                    .lr = o.lr,
                    .warmup = o.warmup,
                    .factor = o.lr_decay,
                    .patience = o.lr_patience,
                    .min_lr = o.lr / 32});
  const bool lower_better = task.lower_is_better();
  LoopResult result;
  result.metric_name = task.metric_name();
  result.token_name = task.token_name();
  result.params = params.numel();
  GradientSync sync(comm);
  // each step's global batch: what one process with `ranks` times the batch would train on
  // (--batch-tokens when given: --batch then only sizes the sorting window, as in one process)
  const BatchOptions batching =
      o.batch_tokens > 0 ? BatchOptions{.sentences = o.batch_size, .tokens = o.batch_tokens * ranks}
                         : BatchOptions{.sentences = o.batch_size * ranks, .tokens = 0};
  TrainerState state;
  double best = lower_better ? 1e300 : -1e300;
  int bad_epochs = 0;
  // the training loss's moving average over the epoch so far (the progress line, train.jsonl);
  // kept in checkpoints, so that a run resumed inside an epoch logs what it would have
  double loss_avg = 0;
  bool continue_avg = false;  // resumed inside an epoch: the average goes on from the checkpoint
  if (resuming(o)) {
    state = load_checkpoint(ckpt, params, opt);  // every rank: the directory is shared
    check_same_run(o, config, state.config, state.extra, ckpt);
    if (root) trim_training_log((fs::path(o.save_dir) / "train.jsonl").string(), state.step);
    sched.load_state(state.schedule);
    best = state.extra.at("best").get<double>();
    bad_epochs = json_integer<int>(state.extra, "bad_epochs", ckpt + "/trainer_state.json");
    minutes_before = state.extra.value("minutes", 0.0);  // absent from older checkpoints
    if (state.data_position > 0 && state.extra.contains("loss_avg")) {
      loss_avg = state.extra["loss_avg"].get<double>();
      continue_avg = true;
    }
    log << "resuming from " << ckpt << ": epoch " << state.epoch + 1 << ", batch "
        << state.data_position << ", step " << state.step << ", " << minutes_before
        << " min trained\n"
        << std::flush;
    // resumed with another global batch (another number of ranks or --batch): the epoch's
    // batches are drawn anew, and it goes on from the same share of them
    const nlohmann::json was = state.extra.value("global_batch", nlohmann::json());
    const nlohmann::json now = {batching.sentences, batching.tokens};
    if (state.data_position > 0 && was.is_array() && was != now) {
      auto count = [&](const BatchOptions& b) {
        return epoch_batches(task.lengths(), task.costs(), b, o.seed, state.epoch).size();
      };
      const size_t before =
                       count({.sentences = was[0].get<int64_t>(), .tokens = was[1].get<int64_t>()}),
                   after = count(batching);
      const int64_t position = static_cast<int64_t>(
          static_cast<double>(state.data_position) * static_cast<double>(after) /
          static_cast<double>(std::max<size_t>(before, 1)));
      log << "the checkpoint's global batch was " << was.dump() << " (sentences, tokens), now "
          << now.dump() << " (" << ranks << " rank(s)): epoch " << state.epoch + 1
          << " goes on from batch " << position << " of " << after << " (it was at "
          << state.data_position << " of " << before << ")\n";
      state.data_position = position;
    }
  }
  // the replicas start equal (the same seed, files and checkpoint on every rank)
  check_replicas_agree(comm, params, "at the start");
  if (ranks > 1)
    log << "data-parallel: " << ranks << " ranks, each step a global batch of "
        << (o.batch_tokens > 0 ? std::to_string(batching.tokens) + " padded positions"
                               : std::to_string(batching.sentences) + " examples")
        << " split across them\n";
  if (o.smoothing > 0)
    log << "exponential smoothing " << o.smoothing
        << ": validation, the best model and kept epochs use the weights' moving average\n";
  if (o.precision == Precision::bf16)
    log << "mixed precision: the products of the linear layers and recurrent cells in bfloat16, "
           "sums and weights in float32\n";
  // The share of the training budget spent, whichever of --max-minutes, --max-steps and --epochs
  // runs out first: the clock of the cooldown (schedule.h). `done` batches of epoch `epoch`.
  double spent = 0;
  auto budget_spent = [&](int64_t epoch, int64_t done, size_t epoch_batches) {
    double p =
        (static_cast<double>(epoch) +
         static_cast<double>(done) / static_cast<double>(std::max<size_t>(epoch_batches, 1))) /
        std::max(o.epochs, 1);
    if (o.max_minutes > 0) p = std::max(p, minutes() / o.max_minutes);
    if (o.max_steps > 0) p = std::max(p, static_cast<double>(state.step) / o.max_steps);
    return ranks > 1 && o.max_minutes > 0 ? dist::agree(comm, p) : p;  // rank 0's clock
  };
  // the rate of the next update
  auto rate = [&] { return sched.lr(state.step + 1) * cooldown_factor(spent, o.cooldown); };
  auto save_state = [&](int64_t epoch, int64_t position) {
    check_replicas_agree(comm, params, "at step " + std::to_string(state.step));
    if (!root) return;
    state.epoch = epoch;
    state.data_position = position;
    state.schedule = sched.state();
    state.extra = {{"best", best},
                   {"bad_epochs", bad_epochs},
                   {"minutes", minutes()},
                   {"seed", std::to_string(o.seed)},
                   {"data", o.data},
                   {"loss_avg", loss_avg},
                   {"global_batch", {batching.sentences, batching.tokens}},
                   {"ranks", ranks}};
    save_checkpoint(ckpt, config, params, opt, state);
  };
  const std::string curve_path = (fs::path(o.save_dir) / "train.jsonl").string();
  std::ofstream curve;
  if (root) {
    curve.open(curve_path, std::ios::app);
    check(curve.good(), curve_path, ": cannot open for appending (", std::strerror(errno), ")");
  }
  // Validation: dev cross-entropy and metric, the best model saved. At the end of an epoch also
  // the schedule and early stopping; a validation inside an epoch (--valid-every, or a stop)
  // leaves them alone, so that a resumed run continues exactly.
  auto validate_and_record = [&](int64_t epoch, bool epoch_done, double loss_avg,
                                 bool record = true) {
    TrainingTask::Validation v;
    bool better = false;
    with_smoothed([&] {
      if (root) v = task.validate();
      if (ranks > 1) {  // the others decide on rank 0's figures
        v.ce = dist::agree(comm, v.ce);
        v.metric = dist::agree(comm, v.metric);
      }
      better = lower_better ? v.metric < best : v.metric > best;
      if (better) {
        best = v.metric;
        if (root) save_model(o.save_dir, config, params);
      }
    });
    if (epoch_done) {
      bad_epochs = better ? 0 : bad_epochs + 1;
      sched.report(v.ce);
    }
    const double ppl = std::exp(v.ce);
    char line[200];
    std::snprintf(line, sizeof line,
                  "validation  epoch %lld  step %lld  dev ce %.4f  ppl %.2f  %s %.2f%s  lr %.2e  "
                  "(%.1f min)\n",
                  static_cast<long long>(epoch) + 1, static_cast<long long>(state.step), v.ce, ppl,
                  result.metric_name.c_str(), v.metric, better ? "  (best, saved)" : "", rate(),
                  minutes());
    log << line << std::flush;
    if (!record || !root) return;
    curve << nlohmann::json{{"epoch", epoch + 1},
                            {"step", state.step},
                            {"minutes", minutes()},
                            {"dev_ce", v.ce},
                            {"dev_ppl", ppl},
                            {"metric", result.metric_name},
                            {"dev_metric", v.metric},
                            {"train_loss", loss_avg},
                            {"lr", rate()}}
                 .dump()
          << "\n"
          << std::flush;
    check(curve.good(), curve_path, ": write failed (", std::strerror(errno), ")");
  };
  Graph g(Mode::Train, o.seed);
  g.set_precision(o.precision);
  // the time or step budget used up (counted over a run and its resumptions)
  auto exhausted = [&] {
    const bool out = (o.max_minutes > 0 && minutes() >= o.max_minutes) ||
                     (o.max_steps > 0 && state.step >= o.max_steps);
    return ranks > 1 && o.max_minutes > 0 ? dist::agree(comm, out) : out;  // rank 0's clock
  };
  // a rank's dropout and sampling streams differ from the others' (rank 0's are one process's)
  const uint64_t rank_stream = root ? 0 : mix64(~static_cast<uint64_t>(comm.rank()));
  const int64_t start_step = state.step;
  std::vector<size_t> mine;  // this rank's examples of the step
  bool out_of_time = false;
  for (int64_t epoch = state.epoch; epoch < o.epochs && !out_of_time; ++epoch) {
    auto batches = epoch_batches(task.lengths(), task.costs(), batching, o.seed, epoch);
    auto epoch_start = Clock::now();
    auto last_print = Clock::now();
    int64_t tokens = 0, first = state.data_position;
    spent = budget_spent(epoch, first, batches.size());
    if (!continue_avg) loss_avg = 0;
    int64_t k = first;
    for (; k < static_cast<int64_t>(batches.size()); ++k) {
      if (exhausted()) {  // checked before a step: a run resumed with its budget spent trains none
        out_of_time = true;
        break;
      }
      const auto step_start = Clock::now();
      const double flops_before = kernels::product_flops();
      g.reseed(o.seed ^ mix64(static_cast<uint64_t>(state.step)) ^ rank_stream);
      const double comm_before = comm.seconds();
      // this rank's share of the global batch (all of it in one process)
      share(batches[k], comm.rank(), ranks, mine);
      TrainingTask::BatchLoss b{};
      if (!mine.empty()) b = task.loss(g, mine, state.step);
      double l = mine.empty() ? 0 : b.loss.value().data()[0];
      // the global batch's mean loss: the ranks' means weighed by their shares of its weight
      double share_of_loss = 1;
      if (ranks > 1) {
        double sums[3] = {l * b.weight, b.weight, static_cast<double>(b.tokens)};
        comm.allreduce_sum(sums);
        l = sums[0] / sums[1];
        share_of_loss = b.weight / sums[1];
        b.tokens = static_cast<int64_t>(sums[2]);
      }
      // a NaN or infinite loss poisons every weight at the next update: stop before it, with
      // the checkpoint and best model as they were
      check(std::isfinite(l), "training: the loss is ", l, " at step ", state.step + 1,
            " (a learning rate too high?); nothing of this step was saved: the checkpoint in ",
            ckpt, " and the best model are as they were");
      if (!mine.empty()) g.backward(b.loss);
      sync.reduce(params, static_cast<float>(share_of_loss));   // the global batch's gradient
      opt.step(rate(), clip_scale(grad_norm(params), o.clip));  // clipped inside the update
      g.clear();
      ++state.step;
      result.run_steps += 1;
      result.run_tokens += b.tokens;
      result.step_seconds += std::chrono::duration<double>(Clock::now() - step_start).count();
      result.step_flops += kernels::product_flops() - flops_before;
      result.comm_seconds += comm.seconds() - comm_before;
      spent = budget_spent(epoch, k + 1, batches.size());
      tokens += b.tokens;
      loss_avg = k == first && !continue_avg ? l : 0.98 * loss_avg + 0.02 * l;
      continue_avg = false;
      double secs = std::chrono::duration<double>(Clock::now() - epoch_start).count();
      if (std::chrono::duration<double>(Clock::now() - last_print).count() > 5 ||
          k + 1 == static_cast<int64_t>(batches.size())) {
        last_print = Clock::now();
        double per_batch = secs / static_cast<double>(k + 1 - first);
        double eta = per_batch * static_cast<double>(static_cast<int64_t>(batches.size()) - k - 1);
        if (o.max_minutes > 0) eta = std::min(eta, 60 * (o.max_minutes - minutes()));
        char line[200];
        std::snprintf(line, sizeof line,
                      "epoch %lld/%d  batch %lld/%zu  loss %.3f  ppl %.1f  %.0f %s/s  "
                      "elapsed %s  ETA %s\n",
                      static_cast<long long>(epoch) + 1, o.epochs, static_cast<long long>(k) + 1,
                      batches.size(), loss_avg, std::exp(loss_avg),
                      static_cast<double>(tokens) / secs, task.token_name().c_str(),
                      clock_text(minutes() * 60).c_str(), clock_text(std::max(eta, 0.0)).c_str());
        log << line << std::flush;
      }
      if (o.measure) continue;  // nothing validated or written
      if (o.valid_every > 0 && state.step % o.valid_every == 0 &&
          k + 1 < static_cast<int64_t>(batches.size())) {
        auto t = Clock::now();
        validate_and_record(epoch, false, loss_avg);
        save_state(epoch, k + 1);
        epoch_start += Clock::now() - t;  // throughput counts training time only
      } else if (state.step % o.checkpoint_every == 0) {
        save_state(epoch, k + 1);
      }
    }
    if (exhausted()) out_of_time = true;  // with the epoch's last step
    continue_avg = false;                 // the next epoch's average starts afresh
    const bool epoch_done = k >= static_cast<int64_t>(batches.size());
    result.epochs = static_cast<int>(epoch + 1);
    if (o.measure) continue;
    // a run that trained nothing here (its budget was spent) re-evaluates, recording nothing;
    // an epoch's end is recorded even when a resumed run had no batch of it left to train
    validate_and_record(epoch, epoch_done, loss_avg, /*record=*/k > first || epoch_done);
    if (epoch_done && o.keep_epochs > 0 && root)
      with_smoothed([&] { keep_epoch_weights(o, params, epoch + 1); });
    save_state(epoch_done ? epoch + 1 : epoch, epoch_done ? 0 : k);
    if (bad_epochs > o.patience) {
      log << "early stopping: no better dev " << result.metric_name << " for " << bad_epochs
          << " epochs\n";
      break;
    }
  }
  if (out_of_time && state.step == start_step)
    log << "the time or step budget is used up: nothing trained (a larger --max-steps or "
           "--max-minutes with --resume continues)\n";
  else if (out_of_time && !o.measure)
    log << "stopped by the time or step budget; --resume continues\n";
  if (ranks > 1 && result.run_steps > 0)
    log << "data-parallel: rank 0 spent " << result.comm_seconds << " s of " << result.step_seconds
        << " s of training steps in collectives ("
        << 1000 * result.comm_seconds / static_cast<double>(result.run_steps)
        << " ms per step: waiting for the other ranks and summing gradients)\n";
  result.best_metric = best;
  result.steps = state.step;
  result.minutes = minutes();
  return result;
}

}  // namespace heed
