// The encoder-decoder trainer and model loader (see the header).
// Leaves out: multi-process data loading (the shared datasets fit in memory many times over).
#include "heed/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <ostream>

#include "heed/autograd/ops.h"
#include "heed/data/text.h"
#include "heed/decode/beam_search.h"
#include "heed/io/checkpoint.h"
#include "heed/io/files.h"
#include "heed/metrics/metrics.h"
#include "heed/train/batching.h"
#include "heed/train/optimizer.h"
#include "heed/train/schedule.h"
#include "heed/util/error.h"

namespace fs = std::filesystem;

namespace heed {

namespace {

using Clock = std::chrono::steady_clock;

struct Pair {
  std::vector<int32_t> src, tgt;
};

// The two sides of a corpus: how each is segmented and the vocabulary of its units.
struct Sides {
  Segmenter src_seg, tgt_seg;
  Vocab src, tgt;
};

// Unit sequences -> id pairs; pairs with an empty side are dropped, and with `filter` those
// with a side longer than --max-len.
std::vector<Pair> encode(const std::vector<std::vector<std::string>>& src,
                         const std::vector<std::vector<std::string>>& tgt, const TrainConfig& cfg,
                         const Sides& sd, bool filter) {
  std::vector<Pair> out;
  for (size_t i = 0; i < src.size(); ++i) {
    Pair e{sd.src.encode(src[i]), sd.tgt.encode(tgt[i])};
    if (e.src.empty() || e.tgt.empty()) continue;
    if (filter && (static_cast<int64_t>(e.src.size()) > cfg.max_len ||
                   static_cast<int64_t>(e.tgt.size()) > cfg.max_len))
      continue;
    out.push_back(std::move(e));
  }
  return out;
}

// Both sides of a corpus, split into units (each line once).
std::pair<std::vector<std::vector<std::string>>, std::vector<std::vector<std::string>>> split(
    const Corpus& c, const Sides& sd) {
  std::vector<std::vector<std::string>> s, t;
  s.reserve(c.pairs.size());
  t.reserve(c.pairs.size());
  for (const auto& p : c.pairs) {
    s.push_back(sd.src_seg.split(p.src));
    t.push_back(sd.tgt_seg.split(p.tgt));
  }
  return {std::move(s), std::move(t)};
}

Seq2SeqBatch batch_of(const std::vector<Pair>& data, const std::vector<size_t>& ids, bool reverse) {
  std::vector<std::vector<int32_t>> s, t;
  for (size_t i : ids) {
    s.push_back(data[i].src);
    t.push_back(data[i].tgt);
  }
  return make_batch(s, t, reverse);
}

nlohmann::json model_json(const TrainConfig& c, bool g2p) {
  nlohmann::json j = c.kind == ModelKind::Rnn ? c.rnn.to_json() : c.transformer.to_json();
  j["src_units"] = units_name(c.src_units);
  j["tgt_units"] = units_name(c.tgt_units);
  j["g2p"] = g2p;
  return j;
}

// One side's segmenter. SentencePiece models are trained on that side's training lines and
// stored in the model directory as `file`; with no lines (resuming) the stored one is read.
Segmenter side_segmenter(Units u, const std::vector<std::string>* lines, const SpmOptions& o,
                         const std::string& file) {
  if (u != Units::Spm) return Segmenter(u);
  if (lines) write_file_atomic(file, Segmenter::train_spm(*lines, o));
  return Segmenter::from_spm(read_file(file), file);
}

struct Validation {
  double ce = 0, ppl = 0, metric = 0;
};

Validation validate(const Seq2SeqModel& model, const TrainConfig& cfg, const Corpus& valid,
                    const std::vector<Pair>& enc, const Sides& sd, bool g2p) {
  Validation v;
  {  // cross-entropy over all dev target tokens
    double total = 0;
    int64_t tokens = 0;
    Graph g(Mode::Inference);
    for (size_t i = 0; i < enc.size(); i += static_cast<size_t>(cfg.batch_size)) {
      std::vector<size_t> ids;
      for (size_t k = i; k < std::min(enc.size(), i + static_cast<size_t>(cfg.batch_size)); ++k)
        ids.push_back(k);
      Seq2SeqBatch b = batch_of(enc, ids, model.reverse_source());
      total += model.loss(g, b).value().data()[0] * static_cast<double>(b.target_tokens);
      tokens += b.target_tokens;
      g.clear();
    }
    v.ce = total / static_cast<double>(std::max<int64_t>(tokens, 1));
    v.ppl = std::exp(v.ce);
  }
  // the task metric on greedy output
  std::vector<std::string> sources;
  std::vector<std::string> refs;
  std::map<std::string, std::vector<std::string>> alternatives;  // G2P: word -> pronunciations
  if (g2p) {
    alternatives = group_alternatives(valid);
    for (const auto& [word, prons] : alternatives) sources.push_back(word);
  } else {
    for (const auto& p : valid.pairs) {
      sources.push_back(p.src);
      refs.push_back(p.tgt);
    }
  }
  if (cfg.valid_max > 0 && static_cast<int64_t>(sources.size()) > cfg.valid_max) {
    sources.resize(cfg.valid_max);
    if (!refs.empty()) refs.resize(cfg.valid_max);
  }
  std::vector<std::string> hyps;
  for (size_t i = 0; i < sources.size(); i += static_cast<size_t>(cfg.batch_size)) {
    std::vector<std::vector<int32_t>> s;
    for (size_t k = i; k < std::min(sources.size(), i + static_cast<size_t>(cfg.batch_size)); ++k)
      s.push_back(sd.src.encode(sd.src_seg.split(sources[k])));
    auto out =
        decode_batch(model, std::move(s), {.beam = 1, .max_len_ratio = 2.0}, {.wanted = false});
    for (auto& h : out) hyps.push_back(sd.tgt_seg.join(sd.tgt.decode(h.tokens)));
  }
  if (g2p) {
    std::map<std::string, std::string> h;
    std::map<std::string, std::vector<std::string>> r;
    for (size_t i = 0; i < sources.size(); ++i) {
      h[sources[i]] = hyps[i];
      r[sources[i]] = alternatives[sources[i]];
    }
    v.metric = g2p_error_rates(h, r).wer;
  } else {
    v.metric = corpus_bleu(hyps, {refs}).score;
  }
  return v;
}

std::string clock_text(double seconds) {
  char buf[32];
  auto s = static_cast<long>(seconds);
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

// epochs/epoch_K.safetensors for the epoch just finished; the one --keep-epochs before it goes.
void keep_epoch_weights(const TrainConfig& cfg, const ParameterStore& params, int64_t epoch) {
  const fs::path dir = fs::path(cfg.save_dir) / "epochs";
  fs::create_directories(dir);
  auto file = [&](int64_t k) { return dir / ("epoch_" + std::to_string(k) + ".safetensors"); };
  save_weights(file(epoch).string(), params);
  if (epoch > cfg.keep_epochs) fs::remove(file(epoch - cfg.keep_epochs));
}

// "rnn/bahdanau, ..." or "transformer 3+3, d 256, ..." for the log
std::string describe(const TrainConfig& c) {
  if (c.kind == ModelKind::Rnn) return "rnn/" + std::string(attention_name(c.rnn.attention));
  const auto& t = c.transformer;
  return "transformer " + std::to_string(t.enc_layers) + "+" + std::to_string(t.dec_layers) +
         " layers, d " + std::to_string(t.layer.d_model) + ", " + std::to_string(t.layer.heads) +
         " heads, ff " + std::to_string(t.layer.ff);
}

}  // namespace

ModelKind parse_model_kind(const std::string& name) {
  if (name == "rnn") return ModelKind::Rnn;
  if (name == "transformer") return ModelKind::Transformer;
  fail("unknown model '", name, "' (expected rnn or transformer)");
}

std::unique_ptr<Seq2SeqModel> make_seq2seq_model(const nlohmann::json& j, const Scope& scope) {
  ModelKind kind{};
  RnnSeq2SeqConfig rnn;
  TransformerSeq2SeqConfig transformer;
  try {
    kind = parse_model_kind(j.at("model").get<std::string>());
    if (kind == ModelKind::Rnn)
      rnn = RnnSeq2SeqConfig::from_json(j);
    else
      transformer = TransformerSeq2SeqConfig::from_json(j);
  } catch (const nlohmann::json::exception& e) {
    fail("model config: ", e.what());
  }
  if (kind == ModelKind::Rnn) return std::make_unique<RnnSeq2Seq>(rnn, scope);
  return std::make_unique<TransformerSeq2Seq>(transformer, scope);
}

TrainResult train_seq2seq(const TrainConfig& cfg_in, std::ostream& log) {
  TrainConfig cfg = cfg_in;
  check(!cfg.save_dir.empty(), "train: --save DIR is required");
  const auto t0 = Clock::now();
  // training time in minutes, over all runs of this model (a resumed run adds to the minutes
  // its checkpoint recorded): what --max-minutes bounds and train.jsonl's curves are against
  double minutes_before = 0;
  auto minutes = [&] {
    return minutes_before + std::chrono::duration<double>(Clock::now() - t0).count() / 60.0;
  };
  // 1. data, as published
  CorpusFormat fmt = cfg.format == CorpusFormat::Auto ? detect_format(cfg.train_src) : cfg.format;
  const bool g2p = fmt == CorpusFormat::Cmudict;
  // a single TSV file without a dev file of its own is split by line number (data/corpus.h)
  const bool split_file =
      fmt == CorpusFormat::Tsv && (cfg.valid_src.empty() || cfg.valid_src == cfg.train_src);
  check(split_file || !cfg.valid_src.empty(),
        "train: --valid-src is required (only a single TSV file is split into train and dev)");
  Corpus train = read_corpus(fmt, cfg.train_src, cfg.train_tgt, cfg.tsv_columns);
  Corpus valid = split_file ? select_split(train, Split::Dev)
                            : read_corpus(fmt, cfg.valid_src, cfg.valid_tgt, cfg.tsv_columns);
  if (split_file) {
    train = select_split(train, Split::Train);
    log << cfg.train_src
        << ": split by line number (line % 50: 0 test, 25 dev, else train): " << train.pairs.size()
        << " training and " << valid.pairs.size() << " dev pairs\n";
  }
  fs::create_directories(cfg.save_dir);
  const std::string ckpt = (fs::path(cfg.save_dir) / "checkpoint").string();
  const bool resuming = cfg.resume && has_checkpoint(ckpt);
  // 2. segmentation and vocabularies: built on the training side, or the run's own on resume
  Sides sd;
  const fs::path dir(cfg.save_dir);
  std::vector<std::string> src_lines, tgt_lines;
  for (const auto& p : train.pairs) {
    src_lines.push_back(p.src);
    tgt_lines.push_back(p.tgt);
  }
  sd.src_seg = side_segmenter(cfg.src_units, resuming ? nullptr : &src_lines, cfg.spm,
                              (dir / "src.spm").string());
  sd.tgt_seg = side_segmenter(cfg.tgt_units, resuming ? nullptr : &tgt_lines, cfg.spm,
                              (dir / "tgt.spm").string());
  auto [train_src, train_tgt] = split(train, sd);
  const bool joint = cfg.kind == ModelKind::Transformer && cfg.transformer.share_embeddings;
  if (resuming) {
    sd.src = Vocab::load((dir / "src.vocab").string());
    sd.tgt = Vocab::load((dir / "tgt.vocab").string());
  } else if (joint) {  // one vocabulary of both sides' units for the shared embedding table
    std::vector<std::vector<std::string>> both = train_src;
    both.insert(both.end(), train_tgt.begin(), train_tgt.end());
    sd.src = sd.tgt = Vocab::build(both, cfg.src_vocab);
  } else {
    sd.src = Vocab::build(train_src, cfg.src_vocab);
    sd.tgt = Vocab::build(train_tgt, cfg.tgt_vocab);
  }
  if (!resuming) {
    sd.src.save((dir / "src.vocab").string());
    sd.tgt.save((dir / "tgt.vocab").string());
  }
  cfg.rnn.encoder.vocab = cfg.transformer.src_vocab = sd.src.size();
  cfg.rnn.tgt_vocab = cfg.transformer.tgt_vocab = sd.tgt.size();
  cfg.rnn.encoder.dropout = cfg.rnn.dropout;
  std::vector<Pair> train_enc = encode(train_src, train_tgt, cfg, sd, true);
  auto [valid_src, valid_tgt] = split(valid, sd);
  std::vector<Pair> valid_enc = encode(valid_src, valid_tgt, cfg, sd, false);
  check(!train_enc.empty(), cfg.train_src, ": no usable training pairs");
  // 3. model, optimiser, schedule
  const nlohmann::json config_json = model_json(cfg, g2p);
  ParameterStore params;
  Rng init_rng(cfg.seed);
  std::unique_ptr<Seq2SeqModel> model_ptr =
      make_seq2seq_model(config_json, Scope(params, init_rng));
  const Seq2SeqModel& model = *model_ptr;
  Optimizer opt({.kind = OptimizerConfig::Kind::Adam, .beta2 = cfg.adam_beta2}, params);
  LrSchedule sched({.kind = cfg.schedule,
                    .lr = cfg.lr,
                    .warmup = cfg.warmup,
                    .factor = cfg.lr_decay,
                    .patience = cfg.lr_patience,
                    .min_lr = cfg.lr / 32});
  const bool lower_better = g2p;
  TrainResult result;
  result.metric_name = g2p ? "WER" : "BLEU";
  TrainerState state;
  double best = lower_better ? 1e300 : -1e300;
  int bad_epochs = 0;
  if (resuming) {
    state = load_checkpoint(ckpt, params, opt);
    sched.load_state(state.schedule);
    best = state.extra.at("best").get<double>();
    bad_epochs = state.extra.at("bad_epochs").get<int>();
    minutes_before = state.extra.value("minutes", 0.0);  // absent from older checkpoints
    log << "resuming from " << ckpt << ": epoch " << state.epoch + 1 << ", batch "
        << state.data_position << ", step " << state.step << ", " << minutes_before
        << " min trained\n";
  }
  log << "heed train: " << describe(cfg) << ", " << train_enc.size() << " training pairs, vocab "
      << sd.src.size() << " -> " << sd.tgt.size() << ", " << params.numel() << " parameters\n"
      << std::flush;
  auto save_state = [&](int64_t epoch, int64_t position) {
    state.epoch = epoch;
    state.data_position = position;
    state.schedule = sched.state();
    state.extra = {{"best", best}, {"bad_epochs", bad_epochs}, {"minutes", minutes()}};
    save_checkpoint(ckpt, config_json, params, opt, state);
  };
  std::ofstream curve((fs::path(cfg.save_dir) / "train.jsonl").string(), std::ios::app);
  // 4. the loop, over length-bucketed batches
  std::vector<int64_t> src_len, cost;
  for (const Pair& p : train_enc) {
    src_len.push_back(static_cast<int64_t>(p.src.size()));
    cost.push_back(static_cast<int64_t>(std::max(p.src.size(), p.tgt.size()) + 1));  // + EOS
  }
  const BatchOptions batching{.sentences = cfg.batch_size, .tokens = cfg.batch_tokens};
  // Validation: dev cross-entropy and metric, the best model saved. At the end of an epoch also
  // the schedule and early stopping; a validation inside an epoch (--valid-every, or a stop)
  // leaves them alone, so that a resumed run continues exactly.
  auto validate_and_record = [&](int64_t epoch, bool epoch_done, double loss_avg) {
    Validation v = validate(model, cfg, valid, valid_enc, sd, g2p);
    bool better = lower_better ? v.metric < best : v.metric > best;
    if (better) {
      best = v.metric;
      save_model(cfg.save_dir, config_json, params);
    }
    if (epoch_done) {
      bad_epochs = better ? 0 : bad_epochs + 1;
      sched.report(v.ce);
    }
    char line[200];
    std::snprintf(line, sizeof line,
                  "validation  epoch %lld  step %lld  dev ce %.4f  ppl %.2f  %s %.2f%s  lr %.2e  "
                  "(%.1f min)\n",
                  static_cast<long long>(epoch) + 1, static_cast<long long>(state.step), v.ce,
                  v.ppl, result.metric_name.c_str(), v.metric, better ? "  (best, saved)" : "",
                  sched.lr(state.step + 1), minutes());
    log << line << std::flush;
    curve << nlohmann::json{{"epoch", epoch + 1},     {"step", state.step},
                            {"minutes", minutes()},   {"dev_ce", v.ce},
                            {"dev_ppl", v.ppl},       {"metric", result.metric_name},
                            {"dev_metric", v.metric}, {"train_loss", loss_avg}}
                 .dump()
          << "\n"
          << std::flush;
  };
  Graph g(Mode::Train, cfg.seed);
  bool out_of_time = false;
  for (int64_t epoch = state.epoch; epoch < cfg.epochs && !out_of_time; ++epoch) {
    auto batches = epoch_batches(src_len, cost, batching, cfg.seed, epoch);
    auto epoch_start = Clock::now();
    auto last_print = Clock::now();
    int64_t tokens = 0, first = state.data_position;
    double loss_avg = 0;
    int64_t k = first;
    for (; k < static_cast<int64_t>(batches.size()); ++k) {
      Seq2SeqBatch b = batch_of(train_enc, batches[k], model.reverse_source());
      g.reseed(cfg.seed ^ mix64(static_cast<uint64_t>(state.step)));
      Var loss = model.loss(g, b, cfg.label_smoothing);
      double l = loss.value().data()[0];
      g.backward(loss);
      clip_grad_norm(params, cfg.clip);
      opt.step(sched.lr(state.step + 1));
      g.clear();
      ++state.step;
      tokens += b.target_tokens;
      loss_avg = k == first ? l : 0.98 * loss_avg + 0.02 * l;
      double secs = std::chrono::duration<double>(Clock::now() - epoch_start).count();
      if (std::chrono::duration<double>(Clock::now() - last_print).count() > 5 ||
          k + 1 == static_cast<int64_t>(batches.size())) {
        last_print = Clock::now();
        double per_batch = secs / static_cast<double>(k + 1 - first);
        double eta = per_batch * static_cast<double>(static_cast<int64_t>(batches.size()) - k - 1);
        if (cfg.max_minutes > 0) eta = std::min(eta, 60 * (cfg.max_minutes - minutes()));
        char line[200];
        std::snprintf(line, sizeof line,
                      "epoch %lld/%d  batch %lld/%zu  loss %.3f  ppl %.1f  %.0f tgt tok/s  "
                      "elapsed %s  ETA %s\n",
                      static_cast<long long>(epoch) + 1, cfg.epochs, static_cast<long long>(k) + 1,
                      batches.size(), loss_avg, std::exp(loss_avg),
                      static_cast<double>(tokens) / secs, clock_text(minutes() * 60).c_str(),
                      clock_text(std::max(eta, 0.0)).c_str());
        log << line << std::flush;
      }
      if (cfg.valid_every > 0 && state.step % cfg.valid_every == 0 &&
          k + 1 < static_cast<int64_t>(batches.size())) {
        auto t = Clock::now();
        validate_and_record(epoch, false, loss_avg);
        save_state(epoch, k + 1);
        epoch_start += Clock::now() - t;  // tokens/s counts training time only
      } else if (state.step % cfg.checkpoint_every == 0) {
        save_state(epoch, k + 1);
      }
      if ((cfg.max_minutes > 0 && minutes() >= cfg.max_minutes) ||
          (cfg.max_steps > 0 && state.step >= cfg.max_steps)) {
        out_of_time = true;
        ++k;
        break;
      }
    }
    const bool epoch_done = k >= static_cast<int64_t>(batches.size());
    validate_and_record(epoch, epoch_done, loss_avg);
    if (epoch_done && cfg.keep_epochs > 0) keep_epoch_weights(cfg, params, epoch + 1);
    save_state(epoch_done ? epoch + 1 : epoch, epoch_done ? 0 : k);
    result.epochs = static_cast<int>(epoch + 1);
    if (bad_epochs > cfg.patience) {
      log << "early stopping: no better dev " << result.metric_name << " for " << bad_epochs
          << " epochs\n";
      break;
    }
  }
  if (out_of_time) log << "stopped by the time or step budget; --resume continues\n";
  result.best_metric = best;
  result.steps = state.step;
  result.minutes = minutes();
  return result;
}

std::unique_ptr<ModelFiles> load_model(const std::string& dir) {
  auto m = std::make_unique<ModelFiles>();
  const nlohmann::json j = read_config(dir);
  m->config = j;
  int64_t src_vocab = 0, tgt_vocab = 0;
  try {
    src_vocab = j.at("src_vocab").get<int64_t>();
    tgt_vocab = j.at("tgt_vocab").get<int64_t>();
    const fs::path d(dir);
    m->src_seg = side_segmenter(parse_units(j.at("src_units").get<std::string>()), nullptr, {},
                                (d / "src.spm").string());
    m->tgt_seg = side_segmenter(parse_units(j.at("tgt_units").get<std::string>()), nullptr, {},
                                (d / "tgt.spm").string());
    m->g2p = j.at("g2p").get<bool>();
  } catch (const nlohmann::json::exception& e) {
    fail(dir, "/config.json: ", e.what());
  }
  m->src_vocab = Vocab::load((fs::path(dir) / "src.vocab").string());
  m->tgt_vocab = Vocab::load((fs::path(dir) / "tgt.vocab").string());
  check(m->src_vocab.size() == src_vocab && m->tgt_vocab.size() == tgt_vocab, dir,
        ": the vocabularies do not match config.json");
  Rng rng(1);
  m->model = make_seq2seq_model(j, Scope(m->params, rng));
  load_weights((fs::path(dir) / "model.safetensors").string(), m->params);
  return m;
}

}  // namespace heed
