// Training's one way in: every option of `heed train` typed once (TrainOptions), listed once with
// its flag, help and bounds (visit_train_options), and one function that trains on them
// (train). The command line turns the list into its flags (cli/train.cc), Python into heed.train's
// keywords (python/heed_module.cc); both then call train(), which resolves the model options
// through the chosen family's row (models/registry.h) and runs the task's trainer.
// Leaves out: parsing (cli/, python/), the trainers themselves (train/trainer.h,
// train/classifier_trainer.h) and --bench's measurement (bench/).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "heed/models/model_options.h"
#include "heed/train/classifier_trainer.h"
#include "heed/train/trainer.h"
#include "heed/util/names.h"

namespace heed {

// What `heed train` trains: an encoder-decoder or a classifier.
enum class Task { Translate, Classify };
std::span<const Named<Task>> names(Task);  // "translate" | "classify"
// The learning-rate schedules the options offer, of train/schedule.h's kinds.
std::span<const Named<ScheduleConfig::Kind>> names(ScheduleConfig::Kind);  // "plateau" | ...

struct TrainOptions {
  Task task = Task::Translate;
  // a family of models/registry.h by name or alias (unset: the task's first, rnn or
  // self-attentive)
  std::optional<std::string> model;
  ModelOptions shape;  // the model options, which the family's row turns into its config
  // translate: the data, vocabularies and loop (its `model` is filled in by train())
  TrainConfig seq2seq;
  std::string tsv_columns = "1,2";  // TSV: source and target columns, 1-based
  // classify: labelled files, or SST trees and their classes (2 or 5)
  ClassifyTrainConfig classify;
  std::string train_trees, valid_trees, test_trees;
  std::optional<int32_t> classes;
  // the optimiser's options whose default is the family's (models/registry.h's TrainingDefaults)
  std::optional<ScheduleConfig::Kind> lr_schedule;
  std::optional<int64_t> warmup;
  std::optional<float> adam_beta2;
};

struct TrainOutcome {
  LoopResult loop;            // the best dev metric and when, the run's speed
  double test_accuracy = -1;  // classify with a test file: the best model's accuracy, in %
};
// Trains the model the options describe into options.seq2seq.save_dir, reporting on `log`
// (nothing on the ranks of a data-parallel job other than 0: the caller passes a null stream).
// An Error names the option or file at fault.
TrainOutcome train(const TrainOptions& options, std::ostream& log);

// The --model help: each family of the registry with its summary (and, below the options, its
// defaults: family_defaults).
std::string family_help();
std::string family_defaults();
// The names --model takes: every family's, and their aliases.
std::vector<std::string> family_choices();

// What a numeric option accepts: the command line checks it as it parses (cli/train.cc turns
// each kind into its CLI11 validator), Python as it sets it (check_bounds).
struct Bounds {
  enum class Kind { Any, Size, Range, NonNegative, Positive, Probability, Fraction, Members };
  Kind kind = Kind::Any;
  double lo = 0, hi = 0;  // Range: [lo, hi]; Members: the two values
  bool finite = false;    // Range and NonNegative: NaN and the infinities refused too

  static constexpr Bounds size() { return {.kind = Kind::Size, .lo = 1, .hi = 1 << 24}; }
  static constexpr Bounds range(double lo, double hi, bool finite = false) {
    return {.kind = Kind::Range, .lo = lo, .hi = hi, .finite = finite};
  }
  static constexpr Bounds non_negative(bool finite = false) {
    return {.kind = Kind::NonNegative, .finite = finite};
  }
  static constexpr Bounds positive() { return {.kind = Kind::Positive, .finite = true}; }
  static constexpr Bounds probability() {  // [0, 1)
    return {.kind = Kind::Probability, .lo = 0, .hi = 0.999999, .finite = true};
  }
  static constexpr Bounds fraction() {  // (0, 1]
    return {.kind = Kind::Fraction, .lo = 1e-9, .hi = 1, .finite = true};
  }
  static constexpr Bounds members(double a, double b) {
    return {.kind = Kind::Members, .lo = a, .hi = b};
  }
};
// An Error "FLAG: Value V not in range LO to HI" (the command line's words) when v is out.
void check_bounds(std::string_view flag, const Bounds& bounds, double v);

// Whether an option's field is optional (unset: the family's default), for the visitors.
template <class T>
inline constexpr bool is_optional_v = false;
template <class T>
inline constexpr bool is_optional_v<std::optional<T>> = true;

struct OptionInfo {
  const char* flags;  // "--name", or "--name,!--negation" for a switch
  std::string help;
  Bounds bounds{};
  const char* group = nullptr;     // another group than the one the list is in
  bool command_line_only = false;  // no keyword of heed.train (--bench: the CLI measures)
  bool show_default = true;        // --help prints the default
  char delimiter = '\0';           // a list's separator on the command line (',')
};

// Every option of `heed train`, in --help's order: v.group(name) opens each group, then
// v.option(info, field) for a value (a number, a string, a list, an enum or an optional one),
// v.family(info, field) for --model (a name or alias of models/registry.h),
// v.flag(info, field) for a switch, and v.flag(info, field, on, off) for a switch pair over an
// enum. The fields are o's.
template <class Visitor>
void visit_train_options(TrainOptions& o, Visitor& v) {
  auto& c = o.seq2seq;
  auto& m = o.shape;
  v.group("Task and model");
  v.option({"--task",
            "translate: a sequence-to-sequence model (also G2P on CMUdict) | classify: a sentence "
            "classifier on \"<label> <sentence>\" files (SST)"},
           o.task);
  v.family({"--model", family_help()}, o.model);
  v.group("Data");
  v.option({"--train-src",
            "Training source file (or the single TSV/CMUdict file); required to translate"},
           c.train_src);
  v.option({"--train-tgt", "Training target file (parallel text)"}, c.train_tgt);
  v.option({"--valid-src",
            "Validation source file (or single file); required unless the training file is TSV, "
            "which is then split into train, dev and test (left out) with every sentence in one "
            "part (see `heed split --help`), or with --bench, which validates nothing (the "
            "training data's first 16 entries stand in)"},
           c.valid_src);
  v.option({"--valid-tgt", "Validation target file (parallel text)"}, c.valid_tgt);
  v.option({"--format",
            "The files' format (auto: by the first file; audio: a Kaldi data directory with "
            "wav.scp and text, or a manifest of \"path<TAB>transcript\" lines, detected by its "
            "wav.scp or its first path's extension)"},
           c.format);
  v.option({"--tsv-columns",
            "TSV: source and target columns, 1-based (Anki spa.txt is en<TAB>es: 2,1 trains "
            "es->en)"},
           o.tsv_columns);
  v.option({"--src-units", "Source units (spm: SentencePiece, trained on the training side)"},
           c.src_units);
  v.option({"--tgt-units",
            "Target units (default: word; a recognizer's: char, and word means space-separated "
            "units such as phones)"},
           c.tgt_units);
  v.option({"--spm-vocab-size",
            "SentencePiece pieces per side, or in all with --share-embeddings (a soft limit: "
            "small corpora get fewer)",
            Bounds::range(8, 1 << 24)},
           c.spm.vocab_size);
  v.option({"--spm-type", "SentencePiece model"}, c.spm.model_type);
  v.option({"--src-vocab-size", "Source vocabulary limit (0: none)", Bounds::range(0, 1 << 24)},
           c.src_vocab.max_size);
  v.option({"--tgt-vocab-size", "Target vocabulary limit (0: none)", Bounds::range(0, 1 << 24)},
           c.tgt_vocab.max_size);
  v.option({"--min-freq", "Drop tokens seen fewer times in training", Bounds::range(1, 1 << 30)},
           c.src_vocab.min_freq);
  v.option({"--max-len", "Skip training pairs with a longer side", Bounds::size()}, c.max_len);
  v.group("Speech (--format audio)");
  v.option({"--max-audio-seconds", "A longer recording is refused (an error naming it)",
            Bounds::range(0.1, 1e6, true)},
           c.max_audio_seconds);
  v.flag({"--valid-bleu",
          "Validation scores the dev set's decodes by corpus BLEU (sacreBLEU's 13a, on the "
          "normalised targets) and keeps the highest, instead of the lowest WER: speech "
          "translation, whose targets are another language's text, not transcripts"},
         c.valid_bleu);
  v.option({"--init-encoder",
            "A trained speech model's directory: the new model's front end and encoder start from "
            "its weights and its feature normalisation, the rest at random (speech translation "
            "started from a recognizer, as fairseq's --load-pretrained-encoder-from); the two "
            "encoders must have the same shape, or an error names the tensor that differs"},
           c.init_encoder);
  v.option({"--num-mel-bins", "Kaldi filterbank features per 10 ms frame", Bounds::range(7, 1024)},
           c.mel_bins);
  v.option({"--front-channels",
            "Channels of the front end's two 3x3 stride-2 convolutions (time and frequency / 4)",
            Bounds::range(1, 1024)},
           c.front_channels);
  v.flag({"--utterance-mean",
          "Subtract each utterance's mean per filterbank bin before the training set's global "
          "normalisation (Kaldi's apply-cmvn per utterance, means only; ESPnet's utterance_mvn "
          "without variances): a voice's or a channel's fixed spectral tilt goes; stored in the "
          "model, so that decoding does the same"},
         c.utterance_mean);
  v.flag({"--spec-augment",
          "SpecAugment (Park et al. 2019, LD policy without time warping): per training "
          "utterance 2 frequency masks of up to 27 bins and 2 time masks of up to min(100, 0.2 "
          "frames), masked to the bin's mean; seeded by the step (a resumed run masks alike)"},
         c.spec_augment.enabled);
  v.flag({"--speed-perturb",
          "Speed perturbation (Ko et al. 2015): each training utterance, at each step, played at "
          "0.9, 1.0 or 1.1 times its speed (resampled: shorter or longer, pitch shifted), its "
          "features computed again; seeded by the step"},
         c.wave_augment.speed_perturb);
  v.option({"--noise-prob",
            "Additive noise: each training utterance, at each step, gets white noise with this "
            "probability, at an SNR drawn from --noise-snr-min..--noise-snr-max dB; 0: none",
            Bounds::range(0, 1, true)},
           c.wave_augment.noise_prob);
  v.option({"--noise-snr-min", "Additive noise: the lowest SNR drawn, dB",
            Bounds::range(-50, 100, true)},
           c.wave_augment.snr_lo);
  v.option({"--noise-snr-max", "Additive noise: the highest SNR drawn, dB",
            Bounds::range(-50, 100, true)},
           c.wave_augment.snr_hi);
  v.group("Classifier (--task classify)");
  v.option({"--train", "classify: training file, \"<label> <sentence>\" per line (SST's stsa.*)"},
           o.classify.train);
  v.option({"--valid", "classify: dev file (selects the best model)"}, o.classify.valid);
  v.option({"--test", "classify: test file, scored once with the best dev model at the end"},
           o.classify.test);
  v.option({"--train-trees",
            "classify: SST trees in PTB brackets, a label on every node (trainDevTestTrees_PTB "
            "train.txt): trains on every labelled phrase (instead of --train)"},
           o.train_trees);
  v.option(
      {"--valid-trees", "classify: dev trees; their roots (the sentences) select the best model"},
      o.valid_trees);
  v.option(
      {"--test-trees", "classify: test trees; their roots are scored once with the best dev model"},
      o.test_trees);
  v.option({"--classes",
            "classify, with --train-trees: 2 (SST-2: labels 0-1 negative, 3-4 positive, 2 "
            "dropped) or 5 (SST-5: the labels 0-4); default 2",
            Bounds::members(2, 5)},
           o.classes);
  v.option({"--pooling",
            "classify: attention (Lin et al. 2017: r hops of self-attention over the encoder "
            "states) | max | mean | last (the baselines it replaces; last: BiLSTM only) | cls "
            "(Transformer: the state of a [CLS] token put first). Default: the family's"},
           m.pooling);
  v.option({"--hops", "classify: attention hops r (1: a single vector)", Bounds::range(1, 1024)},
           m.hops);
  v.option({"--penalty", "classify: coefficient of the redundancy penalty ||A A^T - I||_F^2",
            Bounds::non_negative(true)},
           m.penalty);
  v.option({"--mlp-hidden",
            "classify: hidden size of the MLP classifier (default: the family's; 0 only "
            "where the family has no hidden layer)",
            Bounds::size()},
           m.mlp_hidden);
  v.option({"--word-dropout",
            "classify: training replaces each input token by <unk> with this probability",
            Bounds::probability()},
           m.word_dropout);
  v.option({"--max-norm",
            "classify: after each update, rescale each class's weight vector in the output layer "
            "to this L2 norm when it is longer (Kim 2014: 3; 0: no constraint)",
            Bounds::range(0, 1e6, true)},
           m.max_norm);
  v.group("Model: rnn (also the classifier's BiLSTM)");
  v.option({"--attention",
            "rnn: the attention mechanism (default bahdanau); transformer: monotonic | mocha make "
            "every cross-attention head monotonic (Ma et al. 2020; default: soft multi-head)"},
           m.attention);
  v.option({"--cell", "The recurrent cell (encoder and decoder; default: the family's)"}, m.cell);
  v.option({"--rnn-init",
            "How the RNN encoder's cells (and a ctc model's output layer) start: glorot (W "
            "Glorot-uniform, U orthogonal, an LSTM's forget-gate bias 1) | uniform (every entry "
            "U(-1/sqrt(H), 1/sqrt(H)), as PyTorch's nn.LSTM); default: glorot for text, uniform "
            "for a recognizer (it learns faster per update there; docs/RESULTS.md)"},
           m.rnn_init);
  v.option({"--embed",
            "Source embedding size (the classifiers' word embeddings, ConvS2S's E of both sides; "
            "default: the family's)",
            Bounds::size()},
           m.embed);
  v.option({"--tgt-embed", "rnn: target embedding size", Bounds::size()}, m.tgt_embed);
  v.option(
      {"--hidden", "RNN encoder hidden size per direction (the classifier's u)", Bounds::size()},
      m.hidden);
  v.option({"--dec-hidden", "rnn: decoder hidden size", Bounds::size()}, m.dec_hidden);
  v.option({"--layers",
            "Encoder layers (default: the family's; transformer and conv: also the decoder's "
            "unless --dec-layers)",
            Bounds::range(1, 1024), "Task and model"},
           m.layers);
  v.flag({"--bidirectional,!--unidirectional",
          "RNN encoder: both directions (annotations [->h ; "
          "<-h])"},
         m.direction, EncoderDirection::Both, EncoderDirection::Forward);
  v.option({"--encoder-direction",
            "RNN encoder: both (= --bidirectional) | forward (= --unidirectional: each "
            "annotation sees the source up to its position only, as online decoding needs)"},
           m.direction);
  v.flag({"--reverse-source", "rnn: feed the source reversed (Sutskever et al. 2014)"},
         m.reverse_source);
  v.flag({"--syntactic-attention",
          "rnn and the classifiers: a syntactic attention layer over the encoder's states (Kim "
          "et al. 2017, section 3.3): each word attends to its parent and children in a latent "
          "projective dependency tree (arc marginals by inside-outside), x + W [parent ; "
          "children]; `heed attention` draws the tree"},
         m.syntactic_attention);
  v.option({"--attn-dim",
            "Hidden size of additive attention scorers (rnn; the classifier's d_a; default: the "
            "family's)",
            Bounds::size()},
           m.attn_dim);
  v.option({"--readout",
            "rnn, Bahdanau-style decoders (none, bahdanau, monotonic, mocha, hard): concat, "
            "logits straight from [s_i ; c_i ; E y_i-1] | maxout, Bahdanau et al. 2015's deep "
            "output, a maxout layer of --readout-dim units before the vocabulary (hard trained "
            "exactly: for every source position, [s_i ; h_j ; E y_i-1])"},
           m.readout);
  v.option({"--readout-dim", "rnn, --readout maxout: its units l", Bounds::size()}, m.readout_dim);
  v.option({"--window", "rnn: local attention half-width D", Bounds::range(1, 1 << 20)},
           m.local.window);
  v.option({"--ctc-weight",
            "rnn, transformer: joint CTC-attention (Kim, Hori & Watanabe 2017): a CTC head on the "
            "encoder, "
            "the loss lambda CTC + (1 - lambda) attention, and decoding that adds CTC's prefix "
            "scores at the same weight (Watanabe et al. 2017); 0: attention alone",
            Bounds::range(0, 0.99, true)},
           m.ctc_weight);
  v.option({"--location-filters",
            "rnn --attention location: filters K over the previous alignment (Chorowski et al. "
            "2015, eq. 8)",
            Bounds::range(1, 1024)},
           m.location.filters);
  v.option({"--location-width", "rnn --attention location: the filters' width r (odd)",
            Bounds::range(1, 4095)},
           m.location.width);
  v.option({"--location-sharpen",
            "rnn --attention location: sharpening beta >= 1, alpha = softmax(beta e)",
            Bounds::range(1, 1000, true)},
           m.location.sharpen);
  v.flag({"--location-smooth",
          "rnn --attention location: smoothing, alpha = sigmoid(e) / sum sigmoid(e)"},
         m.location.smooth);
  v.option({"--location-window",
            "rnn --attention location: attend within this many frames of the previous "
            "alignment's median (0: everywhere)",
            Bounds::range(0, 1 << 20)},
           m.location.window);
  v.option({"--chunk",
            "rnn and transformer: mocha's chunk w, the entries ending at the monotonic stop "
            "attended softly (Chiu & Raffel 2018; at least the source's length: infinite "
            "lookback, MMA-IL)",
            Bounds::range(1, 1 << 16)},
           m.monotonic_attention.chunk);
  v.option({"--hard-score",
            "rnn, --attention hard: the score function alpha_i = softmax(e_i) chooses by "
            "(bahdanau or luong-*)"},
           m.hard.score);
  v.option({"--hard-train",
            "rnn, --attention hard: reinforce (sample j ~ alpha_i, REINFORCE with a "
            "moving-average baseline, Xu et al. 2015) | gumbel (straight-through Gumbel-softmax, "
            "Jang et al. 2017) | exact (p(y_i) = sum_j alpha_ij p(y_i | h_j), the decoder fed "
            "y_{i-1} only, Wu et al. 2018)"},
           m.hard.training);
  v.option({"--hard-mix",
            "rnn, --hard-train reinforce: the probability of using the expected context instead "
            "of a sample (Xu et al. 2015: 0.5)",
            Bounds::range(0, 1, true)},
           m.hard.mix);
  v.option({"--hard-entropy",
            "rnn, --hard-train reinforce: weight lambda of the entropy bonus -lambda H(alpha_i)",
            Bounds::range(0, 100, true)},
           m.hard.entropy);
  v.option({"--hard-baseline",
            "rnn, --hard-train reinforce: REINFORCE's baseline: a moving average of the "
            "log-likelihood per token: global (one for all, Xu et al. 2015) or word (one per "
            "target word, which takes each word's difficulty out of the advantage); or expected: "
            "each token's log-likelihood with the expected context sum_j alpha_ij h_j in place of "
            "the sample (a soft-attention baseline, Deng et al. 2018; one more read-out per step; "
            "needs --hard-discount 0)"},
           m.hard.baseline);
  v.option({"--hard-discount",
            "rnn, --hard-train reinforce: discount gamma of the return R_t = sum over t' >= t of "
            "gamma^(t'-t) log p(y_t') (1: the whole reward to go; 0: the step's own output only, "
            "lower variance, blind to later steps)",
            Bounds::range(0, 1, true)},
           m.hard.discount);
  v.option({"--hard-tau",
            "rnn, --hard-train gumbel: the first temperature tau_0; step t uses "
            "max(--hard-tau-min, tau_0 exp(-(--hard-anneal) t))",
            Bounds::range(1e-3, 1e3)},
           m.hard.tau);
  v.option({"--hard-tau-min", "rnn, --hard-train gumbel: the lowest temperature",
            Bounds::range(1e-3, 1e3)},
           m.hard.tau_min);
  v.option({"--hard-anneal", "rnn, --hard-train gumbel: the temperature's decay rate per step",
            Bounds::range(0, 1)},
           m.hard.anneal);
  v.flag({"--hard-sample",
          "rnn, --attention hard: decoding samples j ~ alpha_i instead of taking the argmax"},
         m.hard.sample);
  v.option({"--monotonic-noise",
            "rnn and transformer: monotonic/mocha training adds N(0, sigma^2) to the energies "
            "before the sigmoid, which pushes the stopping probabilities towards 0 or 1 (Raffel "
            "et al. 2017; 0: none)",
            Bounds::range(0, 100, true)},
           m.monotonic_attention.noise);
  v.option({"--wait-k",
            "rnn and transformer: wait-k (Ma et al. 2019), prefix-to-prefix: output i attends to "
            "the first i + k source tokens only, in training and decoding (rnn: bahdanau, "
            "luong-*; with --unidirectional or --causal-encoder, translate --online reads k "
            "tokens, then one per output); 0: off",
            Bounds::range(0, 1 << 20)},
           m.wait_k);
  v.option({"--wait-k-chunk",
            "rnn on audio with --wait-k: the source is read in chunks of this many encoder "
            "positions (40 ms each), wait-k's source tokens: output i attends to the first "
            "(i + k) chunks (Ma, Pino & Koehn 2020's fixed pre-decision); 0: 7 (280 ms)",
            Bounds::range(0, 1 << 20)},
           m.wait_k_chunk);
  v.option({"--wait-k-sample",
            "rnn and transformer with --wait-k: multi-path training (Elbayad et al. 2020), each "
            "batch at a k drawn uniformly from 1..KMAX, so that one model decodes at any k (heed "
            "translate --wait-k; --wait-k stays the default and what validation decodes with); "
            "0: every batch at --wait-k",
            Bounds::range(0, 1 << 20)},
           c.wait_k_sample);
  v.option({"--latency-weight",
            "rnn and transformer, --attention monotonic|mocha: training adds this weight times "
            "the expected delay (source tokens read before each output; a stop that runs off the "
            "end reads them all), the transformer's gathered over its heads by --latency-gather, "
            "trading quality for latency as Ma et al. 2020's L_avg (and MILk's expected latency, "
            "Arivazhagan et al. 2019) does; 0: none",
            Bounds::range(0, 100, true)},
           m.latency.weight);
  v.option({"--latency-gather",
            "transformer, with --latency-weight: a sentence's delay from its heads' (every "
            "layer's) mean delays: mean | weighted, their softmax-weighted average, a soft maximum "
            "that follows the heads online decoding waits for (Ma et al. 2020); mean is the "
            "default: weighted puts the gradient on the slowest heads, and a head that has run "
            "off the source (stopping probabilities near 0) gets almost none, so it stays there"},
           m.latency_gather);
  v.option({"--latency-warmup",
            "rnn and transformer, with --latency-weight or --latency-var-weight: the weights ramp "
            "up linearly from 0 over this many updates, so that the decoder learns to use its "
            "context before the term pushes the stops back (from the first update a large weight "
            "locks them onto the first words); 0: full weight from the start",
            Bounds::range(0, static_cast<double>(int64_t{1} << 40))},
           m.latency.warmup);
  v.option({"--latency-var-weight",
            "transformer, --attention monotonic|mocha: training adds this weight times the "
            "variance of the heads' expected delays at each output (Ma et al. 2020's L_var: the "
            "heads kept together); 0: none",
            Bounds::range(0, 100, true)},
           m.latency.var_weight);
  v.option({"--head-drop",
            "transformer, --attention monotonic|mocha: HeadDrop (Inaguma et al. 2020), each head "
            "of each sentence masked out in training with this probability and the kept ones "
            "scaled up, so that every head has to align and none is left to stop on the first "
            "word; 0: none",
            Bounds::range(0, 0.99)},
           m.head_drop);
  v.option({"--monotonic-layers",
            "transformer, --attention monotonic|mocha: only the top N decoder layers have "
            "monotonic heads; the layers below have no cross-attention and read the target alone "
            "(Inaguma et al. 2020 prune the lower layers' heads, which stop on the first word "
            "instead of aligning); 0: every layer",
            Bounds::range(0, 1024)},
           m.monotonic_layers);
  v.option({"--monotonic-policy",
            "transformer, --attention monotonic|mocha: heads = a stop per head of every layer (Ma "
            "et al. 2020's MMA; the default); shared = one stopping head in the lowest attending "
            "layer, and every head of every layer attends over the chunk ending at its stop "
            "(MILk's policy, Arivazhagan et al. 2019: with --chunk >= the longest source, every "
            "head sees the whole prefix read, as in wait-k)"},
           m.monotonic_policy);
  v.option({"--monotonic-bias",
            "rnn and transformer: initial value of monotonic/mocha's energy bias r (negative: "
            "early alignments move on rather than stop)",
            Bounds::range(-100, 100, true)},
           m.monotonic_attention.bias);
  v.group("Model: transformer (also the classifier's encoder)");
  v.option({"--dec-layers", "transformer and conv: decoder layers (default: --layers)",
            Bounds::range(1, 1024)},
           m.dec_layers);
  v.option(
      {"--d-model", "transformer: model width d_model (default: the family's)", Bounds::size()},
      m.d_model);
  v.option({"--heads", "transformer: attention heads (d_k = d_model / h; default: the family's)",
            Bounds::range(1, 1024)},
           m.heads);
  v.option(
      {"--ff", "transformer: feed-forward inner size d_ff (default: the family's)", Bounds::size()},
      m.ff);
  v.option({"--norm",
            "transformer: LayerNorm placement, post (Vaswani et al. 2017: x + F(x), then LN) | "
            "pre (x + F(LN(x)), a final LN; trains without warmup trouble). Default: the "
            "family's"},
           m.norm);
  v.option({"--activation", "transformer: feed-forward activation"}, m.activation);
  v.option({"--positions",
            "transformer: sinusoidal (Vaswani et al. 2017) or learned position embeddings"},
           m.positions);
  v.option({"--max-positions",
            "transformer and conv: longest sequence (source or output) the position table holds "
            "(default: the family's)",
            Bounds::range(1, 1 << 20)},
           m.max_positions);
  v.flag({"--untied-output",
          "transformer: a separate output matrix (default: tied to the target embedding, Press & "
          "Wolf 2017)"},
         m.untied_output);
  v.flag({"--causal-encoder",
          "transformer: encoder self-attention over earlier positions only, so that a source "
          "prefix's states do not change as the source goes on (online decoding with --wait-k)"},
         m.causal_encoder);
  v.option({"--encoder-chunk",
            "transformer encoder: chunked self-attention for streaming (a ctc recognizer's, "
            "--encoder transformer): position i sees its chunk of N positions (40 ms each after "
            "a speech front end), --left-chunks chunks before it, and with ctc's --lookahead that "
            "many positions past the chunk in the first layer; a stream computes each chunk "
            "once. 0: every position sees every other",
            Bounds::range(0, 1 << 16)},
           m.encoder_chunk);
  v.option({"--left-chunks",
            "transformer encoder: with --encoder-chunk, the chunks to the left each position "
            "sees (bounded, so a stream's cost per chunk stays flat)",
            Bounds::range(0, 1 << 16)},
           m.left_chunks);
  v.flag({"--share-embeddings",
          "transformer: one embedding table and one joint vocabulary for both sides (with spm on "
          "both sides: one SentencePiece model trained on both, as joint BPE)"},
         m.share_embeddings);
  v.group("Model: ctc");
  v.option({"--encoder",
            "ctc and rnn: the encoder, rnn (--layers of bidirectional --cell; ctc: default lstm "
            "and 2 layers, sized by --embed and --hidden) | transformer (ctc: the transformer "
            "flags) | conv (residual gated dilated convolutions: --embed, --conv-channels, "
            "--conv-kernel, --conv-dilations, --conv-causal) | kim (Kim 2014's convolutions of "
            "several widths: --embed, --kim-widths, --kim-maps)"},
           m.encoder);
  v.group("Model: convolutional encoder (--encoder conv) and ConvS2S (--model conv)");
  v.option({"--conv-channels", "conv: channels C of every layer (default: the family's)",
            Bounds::size()},
           m.conv_channels);
  v.option({"--conv-kernel", "conv: kernel width k", Bounds::range(1, 64)}, m.conv_kernel);
  v.option({.flags = "--conv-dilations",
            .help = "conv: one dilation per layer (WaveNet: 1 2 4 8 ...); the receptive field 1 "
                    "+ sum (k - 1) d is printed at the start",
            .bounds = Bounds::range(1, 1 << 16),
            .delimiter = ','},
           m.conv_dilations);
  v.flag({"--conv-weight-norm",
          "conv: weight normalisation of every convolution, w = g v / ||v|| (Salimans & Kingma "
          "2016; ConvS2S)"},
         m.conv_weight_norm);
  v.flag({"--conv-causal",
          "conv: causal convolutions (output t sees inputs up to t: online decoding); default: "
          "centred (k odd)"},
         m.conv_causal);
  v.group("Model: Kim's convolutions (--encoder kim, --model kim-cnn)");
  v.option({.flags = "--kim-widths",
            .help = "kim: the filter widths h, one set of --kim-maps filters each (Kim 2014: 3 4 "
                    "5)",
            .bounds = Bounds::range(1, 64),
            .delimiter = ','},
           m.kim_widths);
  v.option({"--kim-maps", "kim: feature maps per width (Kim 2014: 100)", Bounds::size()},
           m.kim_maps);
  v.group("Model: ctc");
  v.option({"--upsample",
            "ctc: positions per source unit, each unit repeated K times (CTC emits at most one "
            "label per position, and a blank between repeats: G2P needs K >= 2 for words with "
            "more phones than letters, X -> EH K S)",
            Bounds::range(1, 64)},
           m.upsample);
  v.option({"--lookahead",
            "ctc: positions each output also reads ahead (Amodei et al. 2016's lookahead "
            "convolution, Deep Speech 2, section 3.5): y_t = softmax(sum_j W_j h_(t+j) + b), j = "
            "0..N; a streaming (--unidirectional) recognizer then waits N x 40 ms for its "
            "future. With --encoder transformer --encoder-chunk, the chunked attention's "
            "lookahead instead: the first layer sees N positions past each chunk",
            Bounds::range(0, 32)},
           m.lookahead);
  v.option({"--dropout", "Dropout (default: the family's; where each applies it: below)",
            Bounds::probability(), "Task and model"},
           m.dropout);
  v.group("Training");
  v.option({"--batch", "Sentences per batch (also sets the length-sorting window: 50 batches)",
            Bounds::range(1, 1 << 24)},
           c.batch_size);
  v.option({"--batch-tokens",
            "Batch by size instead: at most this many padded positions per batch (sentences x "
            "longest side, as fairseq's --max-tokens); 0: by sentences",
            Bounds::range(0, 1 << 30)},
           c.batch_tokens);
  v.option({"--epochs", "Maximum epochs", Bounds::range(1, 1 << 20)}, c.epochs);
  v.option({"--max-minutes",
            "Training time budget in minutes, counted over a run and its resumptions (0: none)",
            Bounds::non_negative(true)},
           c.max_minutes);
  v.option({"--max-steps", "Stop after this many updates (0: none)", Bounds::non_negative()},
           c.max_steps);
  v.option({"--lr",
            "Adam learning rate: the peak rate after --warmup; then cut by --lr-decay when dev "
            "cross-entropy stops improving (plateau) or decayed as 1/sqrt(step)",
            Bounds::positive()},
           c.lr);
  v.option({"--lr-schedule",
            "plateau, or inverse-sqrt (Vaswani et al. 2017, eq. 3, peaking at --lr after --warmup "
            "steps). Default: the family's"},
           o.lr_schedule);
  v.option({"--warmup",
            "Steps of linear warmup to --lr. Default: the family's (the Transformer's 4000), "
            "cut to a tenth of the run's planned updates (--epochs, --max-steps) when the run "
            "is shorter than ten warmups, so that a short run still trains at --lr",
            Bounds::non_negative()},
           o.warmup);
  v.option({"--cooldown",
            "Share of the training budget (--max-minutes, --max-steps or --epochs, whichever ends "
            "first) over which the rate falls linearly to 0 at the end: warmup-stable-decay (Hu "
            "et al. 2024; Hägele et al. 2024); 0: none",
            Bounds::range(0, 1)},
           c.cooldown);
  v.option(
      {"--adam-beta2", "Adam second-moment decay (default: the family's)", Bounds::probability()},
      o.adam_beta2);
  v.option({"--weight-decay",
            "Decoupled weight decay: AdamW's p -= lr * wd * p every step (Loshchilov & Hutter "
            "2019); 0: plain Adam",
            Bounds::non_negative(true)},
           c.weight_decay);
  v.option({"--exponential-smoothing",
            "Validate and save the weights' moving average: after update t, s = (1 - a) s + a w "
            "with a = max(F, 1/t), the mean of all updates' weights until t = 1/F, an "
            "exponential moving average over about the last 1/F updates after (Polyak & Juditsky "
            "1992; Marian's flag); training goes on with w. 0: off",
            Bounds::probability()},
           c.smoothing);
  v.flag({"--adadelta",
          "Adadelta (Zeiler 2012: rho 0.95, eps 1e-6; Kim 2014's optimizer) instead of Adam; give "
          "--lr 1 for Zeiler's form (--weight-decay: L2 on the gradient)"},
         c.adadelta);
  v.option({"--lr-decay", "Factor applied to the LR when dev cross-entropy stops improving",
            Bounds::fraction()},
           c.lr_decay);
  v.option(
      {"--lr-patience", "Epochs without a better dev cross-entropy tolerated before each LR cut",
       Bounds::non_negative()},
      c.lr_patience);
  v.option({"--clip", "Global gradient-norm clipping", Bounds::positive()}, c.clip);
  v.option({"--label-smoothing", "Label smoothing epsilon", Bounds::probability()},
           c.label_smoothing);
  v.option({"--patience",
            "Early stopping: epochs in a row without a better dev metric tolerated; the next one "
            "ends training (3: the fourth epoch in a row without one stops it)",
            Bounds::non_negative()},
           c.patience);
  v.option({"--checkpoint-every", "Steps between checkpoints",
            Bounds::range(1, static_cast<double>(int64_t{1} << 40))},
           c.checkpoint_every);
  v.option({"--valid-every",
            "Also validate (and keep the best model) every N steps inside an epoch; 0: at epoch "
            "ends only",
            Bounds::non_negative()},
           c.valid_every);
  v.option({"--valid-max", "Dev sentences decoded for the metric (0: all)", Bounds::non_negative()},
           c.valid_max);
  v.option({"--log-every",
            "A record of the training step (loss, learning rate, gradient norm, tokens/s) in "
            "train.jsonl every N updates, for heed report's curves; 0: validations only",
            Bounds::non_negative()},
           c.log_every);
  v.option({"--keep-epochs",
            "Keep the weights of the last N epochs in DIR/epochs/ for `heed average` (checkpoint "
            "averaging); 0: none",
            Bounds::non_negative()},
           c.keep_epochs);
  v.option({"--seed", "Random seed"}, c.seed);
  v.option({"--precision",
            "Products of the training step's linear layers and recurrent cells: bfloat16 rounds "
            "the operands to bf16 (sums, weights and the rest in fp32: mixed precision; about "
            "twice the GEMM speed on CPUs with AVX512_BF16)"},
           c.precision);
  v.option({.flags = "--save",
            .help = "Model directory (required, except with --bench)",
            .show_default = false},
           c.save_dir);
  v.flag({.flags = "--bench",
          .help = "Measure the training speed instead (heed bench train is the same): train for "
                  "--max-minutes or --max-steps without validating or keeping anything (--save "
                  "optional: a temporary directory), the progress on stderr, then one JSON line "
                  "on stdout: target tokens/s, updates/s, peak memory, FLOPs per target token, "
                  "GFLOP/s and their fraction of the GEMM rate this CPU reaches (mfu), the CPU",
          .command_line_only = true},
         c.measure);
  v.option({.flags = "--log",
            .help = "Also append the training log (progress, validations, warnings) to this file",
            .show_default = false},
           c.log_file);
  v.flag({"--quiet",
          "No training log on stderr (errors still; the closing line on stdout; --log still "
          "gets it all)"},
         c.quiet);
  v.flag({"--resume", "Continue from the checkpoint in the model directory"}, c.resume);
  v.flag({"--force-resume",
          "With --resume: continue even when the data, --seed or model options differ from the "
          "checkpoint's (listed otherwise as an error)"},
         c.force_resume);
  v.flag({"--overwrite",
          "Start over in a model directory that holds a run, removing its model, checkpoint, log "
          "and vocabularies (without it, such a directory is refused)"},
         c.overwrite);
}

}  // namespace heed
