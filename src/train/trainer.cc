// The encoder-decoder trainer (see the header).
// Leaves out: multi-process data loading (the shared datasets fit in memory many times over).
#include "heed/train/trainer.h"

#include <algorithm>
#include <filesystem>
#include <ostream>

#include "heed/autograd/ops.h"
#include "heed/data/text.h"
#include "heed/decode/beam_search.h"
#include "heed/dist/communicator.h"
#include "heed/io/files.h"
#include "heed/io/model_dir.h"
#include "heed/kernels/random.h"
#include "heed/metrics/metrics.h"
#include "heed/models/model_files.h"
#include "heed/train/loop.h"
#include "heed/util/error.h"

namespace fs = std::filesystem;

namespace heed {

namespace {

struct Pair {
  std::vector<int32_t> src, tgt;
  size_t index = 0;  // in its corpus
};

// The two sides of a corpus: how each is segmented and the vocabulary of its units.
struct Sides {
  Segmenter src_seg, tgt_seg;
  Vocab src, tgt;
};

// Unit sequences -> id pairs; pairs with an empty side are dropped (training pairs longer than
// --max-len have already left, before the vocabularies were built).
std::vector<Pair> encode(const std::vector<std::vector<std::string>>& src,
                         const std::vector<std::vector<std::string>>& tgt, const Sides& sd) {
  std::vector<Pair> out;
  for (size_t i = 0; i < src.size(); ++i) {
    Pair e{sd.src.encode(src[i]), sd.tgt.encode(tgt[i]), i};
    if (e.src.empty() || e.tgt.empty()) continue;
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

Seq2SeqBatch batch_of(const std::vector<Pair>& data, std::span<const size_t> ids, bool reverse) {
  std::vector<std::vector<int32_t>> s, t;
  for (size_t i : ids) {
    s.push_back(data[i].src);
    t.push_back(data[i].tgt);
  }
  return make_batch(s, t, reverse);
}

nlohmann::json model_json(const TrainConfig& c, bool g2p) {
  nlohmann::json j = to_json(c.model);
  j["src_units"] = units_name(c.src_units);
  j["tgt_units"] = units_name(c.tgt_units.value_or(Units::Word));
  j["g2p"] = g2p;
  return j;
}

// One side's segmenter. SentencePiece models are trained on that side's training lines and
// stored in the model directory as `file`; with no lines (resuming) the stored one is read.
Segmenter side_segmenter(Units u, const std::vector<std::string>* lines, const SpmOptions& o,
                         const std::string& file) {
  if (u == Units::Spm && lines) write_file_atomic(file, Segmenter::train_spm(*lines, o));
  return load_segmenter(u, file);
}

TrainingTask::Validation validate(const Seq2SeqModel& model, const TrainConfig& cfg,
                                  const Corpus& valid, const std::vector<Pair>& enc,
                                  const Sides& sd, bool g2p) {
  TrainingTask::Validation v;
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

// Translation (or G2P) as a task of the shared loop: id pairs bucketed by source length, the
// model's teacher-forced loss, validation by dev cross-entropy and BLEU (WER for CMUdict).
class Seq2SeqTask final : public TrainingTask {
 public:
  Seq2SeqTask(const Seq2SeqModel& model, const TrainConfig& cfg, std::vector<Pair> train,
              const Corpus& valid, std::vector<Pair> valid_enc, const Sides& sd, bool g2p)
      : model_(model),
        cfg_(cfg),
        train_(std::move(train)),
        valid_(valid),
        valid_enc_(std::move(valid_enc)),
        sd_(sd),
        g2p_(g2p) {
    for (const Pair& p : train_) {
      lengths_.push_back(static_cast<int64_t>(p.src.size()));
      costs_.push_back(static_cast<int64_t>(std::max(p.src.size(), p.tgt.size()) + 1));  // + EOS
    }
  }
  std::span<const int64_t> lengths() const override { return lengths_; }
  std::span<const int64_t> costs() const override { return costs_; }
  BatchLoss loss(Graph& g, std::span<const size_t> examples, int64_t step) const override {
    Seq2SeqBatch b = batch_of(train_, examples, model_.reverse_source());
    b.step = step;
    // the step's own stream: the same k for a step whether run through or resumed
    if (cfg_.wait_k_sample > 0) b.wait_k = 1 + Rng(g.next_stream()).below(cfg_.wait_k_sample);
    return {model_.loss(g, b, cfg_.label_smoothing), b.target_tokens,
            static_cast<double>(b.target_tokens)};
  }
  Validation validate() const override {
    return heed::validate(model_, cfg_, valid_, valid_enc_, sd_, g2p_);
  }
  std::string metric_name() const override { return g2p_ ? "WER" : "BLEU"; }
  bool lower_is_better() const override { return g2p_; }
  std::string token_name() const override { return "tgt tok"; }

 private:
  const Seq2SeqModel& model_;
  const TrainConfig& cfg_;
  std::vector<Pair> train_;
  const Corpus& valid_;
  std::vector<Pair> valid_enc_;
  const Sides& sd_;
  bool g2p_;
  std::vector<int64_t> lengths_, costs_;
};

// CTC: the training pairs whose target has more labels (and blanks between repeats) than the
// model has positions for their source can't be aligned: counted, named and left out.
void drop_unalignable(std::vector<Pair>& data, const Corpus& corpus, const std::string& file,
                      int64_t upsample, std::ostream& log) {
  std::vector<Pair> kept;
  std::vector<size_t> dropped;
  for (Pair& p : data) {
    if (ctc_alignable(upsample * static_cast<int64_t>(p.src.size()), p.tgt))
      kept.push_back(std::move(p));
    else
      dropped.push_back(p.index);
  }
  data = std::move(kept);  // (the pairs were moved out: kept is all there is, dropped or not)
  if (dropped.empty()) return;
  log << file << ": " << dropped.size() << " training pairs cannot be aligned by CTC (more labels "
      << "than " << upsample << " position(s) per source unit hold; left out; --upsample "
      << "raises it):";
  for (size_t k = 0; k < dropped.size() && k < 10; ++k) {
    const SentencePair& sp = corpus.pairs[dropped[k]];
    log << (k ? "," : "") << " line " << sp.line << " (" << sp.src << " -> " << sp.tgt << ")";
  }
  log << (dropped.size() > 10 ? ", ...\n" : "\n");
  check(!data.empty(), file, ": no training pair can be aligned by CTC; raise --upsample");
}

}  // namespace

TrainResult train_seq2seq(const TrainConfig& cfg_in, std::ostream& log) {
  TrainConfig cfg = cfg_in;
  check(!cfg.save_dir.empty(), "train: --save DIR is required");
  // 1. data, as published
  CorpusFormat fmt = cfg.format == CorpusFormat::Auto ? detect_format(cfg.train_src) : cfg.format;
  if (fmt == CorpusFormat::Audio) return train_recognizer(cfg, log);
  check(!cfg.valid_bleu,
        "train: --valid-bleu is for speech (--format audio); a text model's dev metric is its "
        "task's own (BLEU for translation, WER for G2P)");
  check(cfg.init_encoder.empty(),
        "train: --init-encoder starts a speech model (--format audio) from a trained one's "
        "front end and encoder; a text model has neither");
  const bool g2p = fmt == CorpusFormat::Cmudict;
  // a TSV or CMUdict file holds both sides: a target file given beside it would be ignored
  check(fmt == CorpusFormat::Parallel || (cfg.train_tgt.empty() && cfg.valid_tgt.empty()),
        "train: --train-tgt/--valid-tgt are for parallel text; ", cfg.train_src, " is ",
        fmt == CorpusFormat::Tsv ? "a TSV file" : "a CMUdict file",
        ", which holds both sides (--tsv-columns chooses a TSV file's columns)");
  // a single TSV file without a dev file of its own is split (data/corpus.h select_split)
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
        << ": split into train/dev/test with every sentence in one part (heed split): "
        << train.pairs.size() << " training and " << valid.pairs.size() << " dev pairs\n";
  }
  const SaveDir save = prepare_save_dir(cfg);  // locked until the run is over
  const bool resumed = save.resumes;
  // 2. segmentation and vocabularies: built on the training side, or the run's own on resume.
  // Data-parallel, rank 0 builds and writes them, the others read them back once written (the
  // model directory is one every rank sees)
  dist::Communicator& comm = dist::world();
  const bool derive = !resumed && comm.root();
  if (!comm.root()) comm.barrier();
  Sides sd;
  const fs::path dir(cfg.save_dir);
  std::vector<std::string> src_lines, tgt_lines;
  for (const auto& p : train.pairs) {
    src_lines.push_back(p.src);
    tgt_lines.push_back(p.tgt);
  }
  const bool joint = joint_vocabulary(cfg.model);
  if (joint && cfg.src_units == Units::Spm && cfg.tgt_units == Units::Spm) {
    // one SentencePiece model of both sides (as joint BPE), stored once per side so that
    // a model directory always reads the same way
    std::vector<std::string> both_lines = src_lines;
    both_lines.insert(both_lines.end(), tgt_lines.begin(), tgt_lines.end());
    sd.src_seg = side_segmenter(Units::Spm, derive ? &both_lines : nullptr, cfg.spm,
                                (dir / "src.spm").string());
    if (derive)
      write_file_atomic((dir / "tgt.spm").string(), read_file((dir / "src.spm").string()));
    sd.tgt_seg = side_segmenter(Units::Spm, nullptr, cfg.spm, (dir / "tgt.spm").string());
  } else {
    sd.src_seg = side_segmenter(cfg.src_units, derive ? &src_lines : nullptr, cfg.spm,
                                (dir / "src.spm").string());
    sd.tgt_seg = side_segmenter(cfg.tgt_units.value_or(Units::Word), derive ? &tgt_lines : nullptr,
                                cfg.spm, (dir / "tgt.spm").string());
  }
  auto [train_src, train_tgt] = split(train, sd);
  // pairs with a side longer than --max-len are left out of training, and so out of the
  // vocabularies too (one long line once multiplied the vocabulary by 80): counted and said
  size_t kept = 0;
  for (size_t i = 0; i < train_src.size(); ++i) {
    if (static_cast<int64_t>(train_src[i].size()) > cfg.max_len ||
        static_cast<int64_t>(train_tgt[i].size()) > cfg.max_len)
      continue;
    if (kept != i) {  // (a vector moved onto itself would be emptied)
      train_src[kept] = std::move(train_src[i]);
      train_tgt[kept] = std::move(train_tgt[i]);
      train.pairs[kept] = std::move(train.pairs[i]);
    }
    ++kept;
  }
  if (kept < train_src.size())
    log << cfg.train_src << ": " << train_src.size() - kept
        << " training pairs longer than --max-len " << cfg.max_len << " units skipped\n";
  train_src.resize(kept);
  train_tgt.resize(kept);
  train.pairs.resize(kept);
  if (!derive) {
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
  if (derive) {
    sd.src.save((dir / "src.vocab").string());
    sd.tgt.save((dir / "tgt.vocab").string());
  }
  if (comm.root()) comm.barrier();  // written: the other ranks read them
  set_vocabularies(cfg.model, sd.src.size(), sd.tgt.size());
  std::vector<Pair> train_enc = encode(train_src, train_tgt, sd);
  auto [valid_src, valid_tgt] = split(valid, sd);
  std::vector<Pair> valid_enc = encode(valid_src, valid_tgt, sd);
  check(!train_enc.empty(), cfg.train_src, ": no usable training pairs");
  // 3. the model, then the shared loop (train/loop.h)
  const nlohmann::json config_json = model_json(cfg, g2p);
  ParameterStore params;
  Rng init_rng(cfg.seed);
  std::unique_ptr<Seq2SeqModel> model =
      make_seq2seq_model(config_json, Scope(params, init_rng), cfg.save_dir);
  if (const FrameLabeller* f = model->frame_labeller())
    drop_unalignable(train_enc, train, cfg.train_src, f->upsample(), log);
  log << "heed train: " << describe(cfg.model) << ", " << train_enc.size()
      << " training pairs, vocab " << sd.src.size() << " -> " << sd.tgt.size() << ", "
      << params.numel() << " parameters\n"
      << std::flush;
  Seq2SeqTask task(*model, cfg, std::move(train_enc), valid, std::move(valid_enc), sd, g2p);
  cfg.data = {{"train", cfg.train_src + (cfg.train_tgt.empty() ? "" : " " + cfg.train_tgt)},
              {"valid", cfg.valid_src + (cfg.valid_tgt.empty() ? "" : " " + cfg.valid_tgt)},
              {"training_pairs", task.lengths().size()},
              {"fingerprints",
               data_fingerprints({cfg.train_src, cfg.train_tgt, cfg.valid_src, cfg.valid_tgt})}};
  return run_training(cfg, task, params, config_json, log);
}

}  // namespace heed
