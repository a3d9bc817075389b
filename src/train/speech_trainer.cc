// Training a speech recognizer (train/trainer.h train_recognizer): spoken corpora to features
// once, then the shared loop (train/loop.h) over batches of frames.
// Leaves out: the features themselves (data/speech_features.h), the models (models/), search
// (decode/ctc_search.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <ostream>
#include <utility>

#include "heed/data/fbank.h"
#include "heed/data/speech_features.h"
#include "heed/data/transcript.h"
#include "heed/decode/recognizer.h"
#include "heed/dist/communicator.h"
#include "heed/io/audio.h"
#include "heed/io/files.h"
#include "heed/io/model_dir.h"
#include "heed/kernels/random.h"
#include "heed/metrics/metrics.h"
#include "heed/models/model_files.h"
#include "heed/train/loop.h"
#include "heed/train/trainer.h"
#include "heed/util/error.h"

namespace fs = std::filesystem;

namespace heed {

namespace {

// One part of a spoken corpus: each utterance's frames, normalised transcript and its ids.
struct SpokenSet {
  std::string source;
  CorpusFeatures features;
  std::vector<std::string> text;          // normalised transcripts
  std::vector<std::vector<int32_t>> ids;  // their units' ids
  std::vector<Utterance> utterances;      // where each is read from (waveform augmentation)
  double hours() const {
    double s = 0;
    for (double x : features.seconds) s += x;
    return s / 3600;
  }
};

// The features and normalised transcripts of a corpus already read (its utterances).
SpokenSet features_of(const SpeechCorpus& corpus, const TrainConfig& c, std::ostream& log) {
  const auto t0 = std::chrono::steady_clock::now();
  SpokenSet set;
  set.source = corpus.source;
  set.features =
      corpus_features(corpus, {.num_mel_bins = static_cast<int>(c.mel_bins)}, c.max_audio_seconds);
  for (const Utterance& u : corpus.utterances) set.text.push_back(normalise_transcript(u.text));
  set.utterances = corpus.utterances;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log << corpus.source << ": " << corpus.utterances.size() << " utterances, " << set.hours()
      << " h of audio, features in " << secs << " s\n"
      << std::flush;
  return set;
}

// The front end's normalisation: the mean and deviation of every bin over the training frames
// (after each utterance's own mean, with utterance_mean).
AudioFrontEndConfig normalisation(const CorpusFeatures& f, bool utterance_mean) {
  AudioFrontEndConfig front;
  front.features = f.bins;
  front.utterance_mean = utterance_mean;
  std::vector<double> s1(static_cast<size_t>(f.bins)), s2(static_cast<size_t>(f.bins));
  int64_t n = 0;
  for (const auto& u : f.frames) {
    const std::vector<float> own =
        utterance_mean ? bin_means(u, f.bins) : std::vector<float>(static_cast<size_t>(f.bins));
    for (size_t k = 0; k < u.size(); ++k) {
      const double v = u[k] - own[k % own.size()];
      s1[k % s1.size()] += v;
      s2[k % s1.size()] += v * v;
    }
    n += static_cast<int64_t>(u.size()) / f.bins;
  }
  check(n > 0, "train: the training utterances hold no frame");
  for (size_t k = 0; k < s1.size(); ++k) {
    const double mean = s1[k] / static_cast<double>(n);
    const double var = std::max(s2[k] / static_cast<double>(n) - mean * mean, 1e-10);
    front.mean.push_back(static_cast<float>(mean));
    front.stddev.push_back(static_cast<float>(std::sqrt(var)));
  }
  return front;
}

std::vector<std::span<const float>> frames_of(const SpokenSet& s, std::span<const size_t> ids) {
  std::vector<std::span<const float>> out;
  for (size_t i : ids) out.emplace_back(s.features.frames[i]);
  return out;
}

// Greedy transcripts of a set, in batches of similar length.
std::vector<std::string> transcribe_set(const Seq2SeqModel& model, const SpokenSet& s,
                                        const Segmenter& seg, const Vocab& vocab, int64_t batch) {
  std::vector<size_t> order(s.text.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return s.features.frames[a].size() < s.features.frames[b].size();
  });
  std::vector<std::string> hyps(order.size());
  for (size_t i = 0; i < order.size(); i += static_cast<size_t>(batch)) {
    std::span<const size_t> ids(order.data() + i,
                                std::min(order.size() - i, static_cast<size_t>(batch)));
    std::vector<std::vector<int32_t>> none(ids.size());
    const Seq2SeqBatch b =
        make_audio_batch(frames_of(s, ids), s.features.bins, none, AudioFrontEndConfig::kMinFrames);
    const auto out = recognize_batch(model, b, {});  // greedy, as heed transcribe's default
    for (size_t k = 0; k < ids.size(); ++k)
      hyps[ids[k]] = normalise_transcript(seg.join(vocab.decode(out[k].front().tokens)));
  }
  return hyps;
}

class SpeechTask final : public TrainingTask {
 public:
  SpeechTask(const Seq2SeqModel& model, const TrainConfig& cfg, const SpokenSet& train,
             std::vector<size_t> kept, const SpokenSet& valid, const Segmenter& seg,
             const Vocab& vocab, std::vector<float> fill)
      : model_(model),
        cfg_(cfg),
        train_(train),
        kept_(std::move(kept)),
        valid_(valid),
        seg_(seg),
        vocab_(vocab),
        fill_(std::move(fill)),
        fbank_({.num_mel_bins = static_cast<int>(cfg.mel_bins)}) {
    for (size_t i : kept_) {
      const auto frames =
          static_cast<int64_t>(train_.features.frames[i].size()) / train_.features.bins;
      lengths_.push_back(frames);
      costs_.push_back(frames);
    }
  }
  std::span<const int64_t> lengths() const override { return lengths_; }
  std::span<const int64_t> costs() const override { return costs_; }
  BatchLoss loss(Graph& g, std::span<const size_t> examples, int64_t step) const override {
    std::vector<size_t> ids;
    std::vector<std::vector<int32_t>> tgt;
    for (size_t e : examples) {
      ids.push_back(kept_[e]);
      tgt.push_back(train_.ids[kept_[e]]);
    }
    Seq2SeqBatch b;
    if (cfg_.spec_augment.enabled || cfg_.wave_augment.enabled()) {
      // the step's own stream: a resumed run augments as the uninterrupted one did
      Rng rng(g.next_stream());
      std::vector<std::vector<float>> masked;
      for (size_t i : ids) {
        masked.push_back(cfg_.wave_augment.enabled() ? augmented(i, rng)
                                                     : train_.features.frames[i]);
        if (cfg_.spec_augment.enabled)  // masked to the mean the front end subtracts
          spec_augment(masked.back(), train_.features.bins,
                       cfg_.utterance_mean ? bin_means(masked.back(), train_.features.bins) : fill_,
                       cfg_.spec_augment, rng);
      }
      std::vector<std::span<const float>> frames(masked.begin(), masked.end());
      b = make_audio_batch(frames, train_.features.bins, tgt, AudioFrontEndConfig::kMinFrames);
    } else {
      b = make_audio_batch(frames_of(train_, ids), train_.features.bins, tgt,
                           AudioFrontEndConfig::kMinFrames);
    }
    b.step = step;
    // multi-path wait-k (--wait-k-sample), as the text trainer: the step's own stream
    if (cfg_.wait_k_sample > 0) b.wait_k = 1 + Rng(g.next_stream()).below(cfg_.wait_k_sample);
    return {model_.loss(g, b), b.target_tokens, static_cast<double>(b.target_tokens)};
  }
  Validation validate() const override {
    Validation v;
    double total = 0;
    int64_t tokens = 0;
    Graph g(Mode::Inference);
    std::vector<size_t> all(valid_.text.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    for (size_t i = 0; i < all.size(); i += static_cast<size_t>(cfg_.batch_size)) {
      std::span<const size_t> ids(all.data() + i,
                                  std::min(all.size() - i, static_cast<size_t>(cfg_.batch_size)));
      std::vector<std::vector<int32_t>> tgt;
      for (size_t k : ids) tgt.push_back(valid_.ids[k]);
      const Seq2SeqBatch b = make_audio_batch(frames_of(valid_, ids), valid_.features.bins, tgt,
                                              AudioFrontEndConfig::kMinFrames);
      total += model_.loss(g, b).value().data()[0] * static_cast<double>(b.target_tokens);
      tokens += b.target_tokens;
      g.clear();
    }
    v.ce = total / static_cast<double>(std::max<int64_t>(tokens, 1));
    const auto hyps = transcribe_set(model_, valid_, seg_, vocab_, cfg_.batch_size);
    v.metric = cfg_.valid_bleu ? corpus_bleu(hyps, {valid_.text}).score
                               : word_error_rate(hyps, valid_.text).percent();
    return v;
  }
  std::string metric_name() const override { return cfg_.valid_bleu ? "BLEU" : "WER"; }

  // Utterance i's features from its waveform sped up or slowed down and noised
  // (train/wave_augment.h); its own features when a faster copy leaves CTC too few frames.
  std::vector<float> augmented(size_t i, Rng& rng) const {
    const Utterance& u = train_.utterances[i];
    const Audio a = read_audio(u.path, {.max_seconds = cfg_.max_audio_seconds});
    const std::span<const float> x = utterance_samples(a, u);
    std::vector<float> f =
        kaldi_fbank(fbank_, wave_augment({x.begin(), x.end()}, cfg_.wave_augment, rng));
    const auto frames = static_cast<int64_t>(f.size()) / train_.features.bins;
    if (f.empty() || (model_.frame_labeller() &&
                      !ctc_alignable(AudioFrontEndConfig::output_frames(frames), train_.ids[i])))
      return train_.features.frames[i];
    return f;
  }
  bool lower_is_better() const override { return !cfg_.valid_bleu; }
  std::string token_name() const override { return "labels"; }

 private:
  const Seq2SeqModel& model_;
  const TrainConfig& cfg_;
  const SpokenSet& train_;
  std::vector<size_t> kept_;  // the training utterances used (aligned, not empty)
  const SpokenSet& valid_;
  const Segmenter& seg_;
  const Vocab& vocab_;
  std::vector<float> fill_;  // SpecAugment's masked value per bin: the mean
  Fbank fbank_;              // waveform augmentation's features
  std::vector<int64_t> lengths_, costs_;
};

// --init-encoder: the front end as the pretrained model's, whose encoder learnt on features
// normalised by its own training set's statistics
AudioFrontEndConfig pretrained_front(const TrainConfig& cfg, const AudioFrontEndConfig& ours) {
  const std::string path = (fs::path(cfg.init_encoder) / "config.json").string();
  const nlohmann::json j = read_json(path);
  check(j.contains("audio"), "--init-encoder ", cfg.init_encoder,
        ": not a speech model (its config.json has no audio front end)");
  AudioFrontEndConfig front = AudioFrontEndConfig::from_json(j.at("audio"));
  check(front.features == ours.features, "--init-encoder ", cfg.init_encoder,
        ": its front end reads ", front.features, " filterbank bins, this run ", ours.features,
        " (--num-mel-bins)");
  check(front.channels == ours.channels, "--init-encoder ", cfg.init_encoder,
        ": its front end has ", front.channels, " channels, this run ", ours.channels,
        " (--front-channels)");
  check(front.utterance_mean == ours.utterance_mean, "--init-encoder ", cfg.init_encoder,
        front.utterance_mean
            ? ": it subtracts each utterance's mean (give --utterance-mean)"
            : ": it does not subtract each utterance's mean (leave out --utterance-mean)");
  return front;
}

}  // namespace

TrainResult train_recognizer(const TrainConfig& cfg_in, std::ostream& log) {
  TrainConfig cfg = cfg_in;
  check(!cfg.save_dir.empty(), "train: --save DIR is required");
  check(!cfg.valid_src.empty(),
        "train: --valid-src is required (a Kaldi data directory or a "
        "manifest of the dev utterances)");
  check(cfg.train_tgt.empty() && cfg.valid_tgt.empty(),
        "train: --train-tgt/--valid-tgt are for parallel text; a speech corpus holds its "
        "transcripts (Kaldi's text, a manifest's second column)");
  check(cfg.src_units == Units::Word, "train: --src-units is for text; a recognizer reads audio");
  check(cfg.mel_bins >= 7, "train: --num-mel-bins must be at least 7 (the front end's kernel)");
  check(cfg.wave_augment.snr_lo <= cfg.wave_augment.snr_hi, "train: --noise-snr-min ",
        cfg.wave_augment.snr_lo, " is above --noise-snr-max ", cfg.wave_augment.snr_hi);
  // characters unless asked for SentencePiece pieces or space-separated units (word: phones,
  // as spoken CMUdict's *.phones.tsv transcribes its words; English words would leave most of a
  // test set unknown)
  const Units units = cfg.tgt_units.value_or(Units::Char);
  // the lists first (cheap, and every malformed line named), the model directory claimed, then
  // the features (minutes for a large corpus)
  const SpeechCorpus train_list = read_speech_corpus(cfg.train_src);
  SpeechCorpus valid_list = read_speech_corpus(cfg.valid_src);
  // validation reads the first --valid-max utterances (0: all), as the text trainer does
  if (cfg.valid_max > 0 && std::cmp_greater(valid_list.utterances.size(), cfg.valid_max))
    valid_list.utterances.resize(static_cast<size_t>(cfg.valid_max));
  check(!train_list.utterances.empty(), cfg.train_src, ": no utterance");
  check(!valid_list.utterances.empty(), cfg.valid_src, ": no utterance");
  const SaveDir save = prepare_save_dir(cfg);
  SpokenSet train = features_of(train_list, cfg, log);
  SpokenSet valid = features_of(valid_list, cfg, log);
  const fs::path dir(cfg.save_dir);
  dist::Communicator& comm = dist::world();
  const bool derive = !save.resumes && comm.root();
  if (!comm.root()) comm.barrier();
  if (units == Units::Spm && derive)
    write_file_atomic((dir / "tgt.spm").string(), Segmenter::train_spm(train.text, cfg.spm));
  const Segmenter seg = load_segmenter(units, (dir / "tgt.spm").string());
  std::vector<std::vector<std::string>> split_train;
  for (const std::string& t : train.text) split_train.push_back(seg.split(t));
  const Vocab vocab =
      derive ? Vocab::build(split_train, cfg.tgt_vocab) : Vocab::load((dir / "tgt.vocab").string());
  if (derive) vocab.save((dir / "tgt.vocab").string());
  if (comm.root()) comm.barrier();
  auto encode = [&](SpokenSet& s) {
    for (const std::string& t : s.text) s.ids.push_back(vocab.encode(seg.split(t)));
  };
  encode(train);
  encode(valid);
  // the model: the family's config with its front end (normalised by the training set)
  AudioFrontEndConfig front = normalisation(train.features, cfg.utterance_mean);
  front.channels = cfg.front_channels;
  if (!cfg.init_encoder.empty()) front = pretrained_front(cfg, front);
  set_audio(cfg.model, front);
  set_vocabularies(cfg.model, 0, vocab.size());
  nlohmann::json config_json = to_json(cfg.model);
  config_json["src_units"] = "audio";
  config_json["tgt_units"] = units_name(units);
  config_json["g2p"] = false;
  config_json["transcripts"] = "lowercase a-z, apostrophe, space (data/transcript.h)";
  ParameterStore params;
  Rng init_rng(cfg.seed);
  std::unique_ptr<Seq2SeqModel> model =
      make_seq2seq_model(config_json, Scope(params, init_rng), cfg.save_dir);
  if (!cfg.init_encoder.empty()) {  // (a resumed run's checkpoint then replaces them all)
    constexpr std::string_view kEncoder[] = {"front/", "encoder/"};
    const std::string weights = (fs::path(cfg.init_encoder) / "model.safetensors").string();
    const int64_t n = load_weights_under(weights, params, kEncoder);
    check(n > 0, "--init-encoder ", cfg.init_encoder, ": this model has no front end or encoder");
    log << "heed train: the front end and encoder (" << n << " tensors) start from "
        << cfg.init_encoder << "\n";
  }
  // utterances with no transcript, or more labels than the model has frames, are left out
  std::vector<size_t> kept;
  size_t empty = 0, unalignable = 0;
  for (size_t i = 0; i < train.ids.size(); ++i) {
    const int64_t frames = AudioFrontEndConfig::output_frames(
        static_cast<int64_t>(train.features.frames[i].size()) / train.features.bins);
    if (train.ids[i].empty())
      ++empty;
    else if (model->frame_labeller() && !ctc_alignable(frames, train.ids[i]))
      ++unalignable;
    else
      kept.push_back(i);
  }
  if (empty + unalignable > 0)
    log << cfg.train_src << ": " << empty << " utterances without a transcript and " << unalignable
        << " with more labels than frames (after subsampling by 4) left out\n";
  check(!kept.empty(), cfg.train_src, ": no usable training utterance");
  log << "heed train: " << describe(cfg.model) << ", " << kept.size() << " training utterances ("
      << train.hours() << " h), " << vocab.size() << " " << units_name(units) << " units, "
      << params.numel() << " parameters\n"
      << std::flush;
  SpeechTask task(*model, cfg, train, std::move(kept), valid, seg, vocab, front.mean);
  cfg.data = {
      {"train", cfg.train_src},
      {"valid", cfg.valid_src},
      {"training_utterances", task.lengths().size()},
      {"spec_augment", cfg.spec_augment.enabled},
      {"init_encoder",
       cfg.init_encoder.empty() ? nlohmann::json(nullptr) : nlohmann::json(cfg.init_encoder)},
      {"speed_perturb", cfg.wave_augment.speed_perturb},
      {"noise", cfg.wave_augment.noise_prob > 0
                    ? nlohmann::json{{"prob", cfg.wave_augment.noise_prob},
                                     {"snr_db", {cfg.wave_augment.snr_lo, cfg.wave_augment.snr_hi}}}
                    : nlohmann::json(nullptr)},
      {"fingerprints",
       data_fingerprints(
           {fs::is_directory(cfg.train_src) ? (fs::path(cfg.train_src) / "wav.scp").string()
                                            : cfg.train_src,
            fs::is_directory(cfg.valid_src) ? (fs::path(cfg.valid_src) / "wav.scp").string()
                                            : cfg.valid_src})}};
  return run_training(cfg, task, params, config_json, log);
}

}  // namespace heed
