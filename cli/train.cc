// `heed train`: train a model from the published files of a dataset.
// Leaves out: the training loop (train/trainer.cc).
#include <iostream>
#include <string>
#include <string_view>

#include "commands.h"
#include "heed/bench/measure.h"
#include "heed/bench/train_bench.h"
#include "heed/dist/communicator.h"
#include "heed/kernels/bf16.h"
#include "heed/util/error.h"
#include "heed/util/names.h"
#include "heed/util/overloaded.h"

namespace heed::cli {

// --bench: the machine measured before the run (its fields on the speed line), and a
// temporary model directory unless --save names one
struct BenchRun {
  std::optional<TempDir> scratch;
  bench::MachineInfo machine;
  explicit BenchRun(LoopOptions& o) {
    check(o.max_minutes > 0 || o.max_steps > 0,
          "train --bench: give a budget, --max-minutes M or --max-steps N");
    if (o.save_dir.empty()) {
      scratch.emplace("heed-bench");
      o.save_dir = scratch->path();
    }
    machine = bench::measure_machine();
    bench::set_line_fields(bench::machine_fields(machine));
  }
  void report(const LoopResult& r, Precision precision) const {
    bench::write_line(std::cout, bench::training_speed(r, precision, machine));
  }
};

void TrainCommand::add(CLI::App& parent, int& threads) {
  app = parent.add_subcommand(
      "train", "Train a sequence-to-sequence model (translation, G2P) or a sentence classifier");
  app->footer(
      "Data-parallel on MPI: `mpirun -np N heed --threads T train ...` trains one model on N "
      "processes, each step on N times --batch (--batch-tokens), split across them; rank 0 "
      "validates and writes the model directory, which every rank must see (docs/"
      "DISTRIBUTED.md)." +
      std::string(dist::mpi_built() ? "" : " This heed was built without MPI."));
  auto& c = config;
  auto& m = rnn;
  auto& enc = std::get<RnnEncoderConfig>(rnn.encoder);  // --model rnn's encoder flags
  auto& tf = transformer;
  app->option_defaults()->group("Task and model");
  add_enum_option(*app, "--task", task,
                  "translate: a sequence-to-sequence model (also G2P on CMUdict) | classify: a "
                  "sentence classifier on \"<label> <sentence>\" files (SST)");
  std::string families;
  std::vector<std::string> names = {"self-attentive", "conv", "kim-cnn"};
  for (const ModelFamily& f : model_families())
    if (f.role == ModelRole::Seq2Seq) {
      families += std::string(f.name) + " (" + std::string(f.summary) + ") | ";
      names.emplace_back(f.name);
    }
  app->add_option("--model", model,
                  "Architecture: " + families +
                      "classify: self-attentive (BiLSTM + Lin et al. 2017's self-attention or "
                      "--pooling) | transformer (a Transformer encoder, --pooling mean by "
                      "default, or cls) | conv (gated dilated convolutions, the --conv-* flags, "
                      "--pooling max by default) | kim-cnn (Kim 2014: --kim-widths, --kim-maps, "
                      "max over time, no hidden layer, dropout 0.5)")
      ->check(CLI::IsMember(names))
      ->capture_default_str();
  app->option_defaults()->group("Data");
  app->add_option("--train-src", c.train_src,
                  "Training source file (or the single TSV/CMUdict file); required to translate");
  app->add_option("--train-tgt", c.train_tgt, "Training target file (parallel text)");
  app->add_option("--valid-src", c.valid_src,
                  "Validation source file (or single file); required unless the training "
                  "file is TSV, which is then split into train, dev and test (left out) with "
                  "every sentence in one part (see `heed split --help`)");
  app->add_option("--valid-tgt", c.valid_tgt, "Validation target file (parallel text)");
  add_enum_option(*app, "--format", format, "The files' format (auto: by the first file)");
  app->add_option("--tsv-columns", tsv_columns,
                  "TSV: source and target columns, 1-based (Anki spa.txt is en<TAB>es: 2,1 "
                  "trains es->en)")
      ->capture_default_str();
  add_enum_option(*app, "--src-units", src_units,
                  "Source units (spm: SentencePiece, trained on the training side)");
  add_enum_option(*app, "--tgt-units", tgt_units, "Target units");
  app->add_option("--spm-vocab-size", c.spm.vocab_size,
                  "SentencePiece pieces per side, or in all with --share-embeddings (a soft limit: "
                  "small corpora get fewer)")
      ->capture_default_str()
      ->check(CLI::Range(8, 1 << 24));
  add_enum_option(*app, "--spm-type", c.spm.model_type, "SentencePiece model");
  app->add_option("--src-vocab-size", c.src_vocab.max_size, "Source vocabulary limit (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 24));
  app->add_option("--tgt-vocab-size", c.tgt_vocab.max_size, "Target vocabulary limit (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 24));
  app->add_option("--min-freq", c.src_vocab.min_freq, "Drop tokens seen fewer times in training")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 30));
  app->add_option("--max-len", c.max_len, "Skip training pairs with a longer side")
      ->capture_default_str()
      ->check(kSize);
  auto& k = classify.model;
  app->option_defaults()->group("Classifier (--task classify)");
  app->add_option("--train", classify.train,
                  "classify: training file, \"<label> <sentence>\" per line (SST's stsa.*)");
  app->add_option("--valid", classify.valid, "classify: dev file (selects the best model)");
  app->add_option("--test", classify.test,
                  "classify: test file, scored once with the best dev model at the end");
  app->add_option(
      "--train-trees", train_trees,
      "classify: SST trees in PTB brackets, a label on every node (trainDevTestTrees_PTB "
      "train.txt): trains on every labelled phrase (instead of --train)");
  app->add_option("--valid-trees", valid_trees,
                  "classify: dev trees; their roots (the sentences) select the best model");
  app->add_option("--test-trees", test_trees,
                  "classify: test trees; their roots are scored once with the best dev model");
  app->add_option("--classes", tree_classes,
                  "classify, with --train-trees: 2 (SST-2: labels 0-1 negative, 3-4 positive, 2 "
                  "dropped) or 5 (SST-5: the labels 0-4)")
      ->capture_default_str()
      ->check(CLI::IsMember({2, 5}));
  add_enum_option(*app, "--pooling", pooling,
                  "classify: attention (Lin et al. 2017: r hops of self-attention over the "
                  "encoder states) | max | mean | last (the baselines it replaces; last: BiLSTM "
                  "only) | cls (Transformer: the state of a [CLS] token put first). Default: "
                  "attention (self-attentive), mean (transformer)");
  app->add_option("--hops", k.hops, "classify: attention hops r (1: a single vector)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  app->add_option("--penalty", k.penalty,
                  "classify: coefficient of the redundancy penalty ||A A^T - I||_F^2")
      ->capture_default_str()
      ->check(kNonNegative);
  app->add_option("--mlp-hidden", k.mlp_hidden, "classify: hidden size of the MLP classifier")
      ->capture_default_str()
      ->check(kSize);
  app->add_option("--word-dropout", k.word_dropout,
                  "classify: training replaces each input token by <unk> with this probability")
      ->capture_default_str()
      ->check(kProbability);
  app->add_option("--max-norm", k.max_norm,
                  "classify: after each update, rescale each class's weight vector in the output "
                  "layer to this L2 norm when it is longer (Kim 2014: 3; 0: no constraint)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6) & kFinite);
  app->option_defaults()->group("Model: rnn (also the classifier's BiLSTM)");
  add_enum_option(*app, "--attention", attention,
                  "rnn: the attention mechanism; transformer: monotonic | mocha make every "
                  "cross-attention head monotonic (Ma et al. 2020; default: soft multi-head)");
  add_enum_option(*app, "--cell", cell, "rnn: the recurrent cell (encoder and decoder)");
  app->add_option("--embed", enc.embed,
                  "rnn: source embedding size (classify: word embedding size, default 300; --model "
                  "conv: E of both sides, default 256)")
      ->capture_default_str()
      ->check(kSize);
  app->add_option("--tgt-embed", m.tgt_embed, "rnn: target embedding size")
      ->capture_default_str()
      ->check(kSize);
  app->add_option("--hidden", enc.hidden,
                  "rnn: encoder hidden size per direction (classify: u, default 300)")
      ->capture_default_str()
      ->check(kSize);
  app->add_option("--dec-hidden", m.dec_hidden, "rnn: decoder hidden size")
      ->capture_default_str()
      ->check(kSize);
  app->add_option(
         "--layers", layers,
         "Encoder layers (default: rnn 1, transformer 3, conv 10; transformer and conv: also "
         "the decoder's unless --dec-layers)")
      ->group("Task and model")
      ->check(CLI::Range(1, 1024));
  app->add_flag("--bidirectional,!--unidirectional", enc.bidirectional,
                "rnn: bidirectional encoder (annotations [->h ; <-h])")
      ->capture_default_str();
  app->add_option_function<std::string>(
         "--encoder-direction", [&enc](const std::string& d) { enc.bidirectional = d == "both"; },
         "rnn: both (= --bidirectional) | forward (= --unidirectional: each annotation sees the "
         "source up to its position only, as online decoding needs)")
      ->check(CLI::IsMember({"both", "forward"}));
  app->add_flag("--reverse-source", m.reverse_source,
                "rnn: feed the source reversed (Sutskever et al. 2014)");
  app->add_option("--attn-dim", m.attn_dim,
                  "rnn: hidden size of additive attention scorers (classify: d_a, default 350)")
      ->capture_default_str()
      ->check(kSize);
  add_enum_option(*app, "--readout", m.readout,
                  "rnn, Bahdanau-style decoders (none, bahdanau, monotonic, mocha, hard): "
                  "concat, logits straight from [s_i ; c_i ; E y_i-1] | maxout, Bahdanau et al. "
                  "2015's deep output, a maxout layer of --readout-dim units before the "
                  "vocabulary (hard trained exactly: for every source position, [s_i ; h_j ; "
                  "E y_i-1])");
  app->add_option("--readout-dim", m.readout_dim, "rnn, --readout maxout: its units l")
      ->capture_default_str()
      ->check(kSize);
  app->add_option("--window", m.window, "rnn: local attention half-width D")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app->add_option("--chunk", m.chunk,
                  "rnn and transformer: mocha's chunk w, the entries ending at the monotonic stop "
                  "attended softly (Chiu & Raffel 2018; at least the source's length: "
                  "infinite lookback, MMA-IL)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
  add_enum_option(*app, "--hard-score", m.hard.score,
                  "rnn, --attention hard: the score function alpha_i = softmax(e_i) chooses by "
                  "(bahdanau or luong-*)");
  add_enum_option(
      *app, "--hard-train", m.hard.training,
      "rnn, --attention hard: reinforce (sample j ~ alpha_i, REINFORCE with a "
      "moving-average baseline, Xu et al. 2015) | gumbel (straight-through "
      "Gumbel-softmax, Jang et al. 2017) | exact (p(y_i) = sum_j alpha_ij p(y_i | h_j), "
      "the decoder fed y_{i-1} only, Wu et al. 2018)");
  app->add_option("--hard-mix", m.hard.mix,
                  "rnn, --hard-train reinforce: the probability of using the expected context "
                  "instead of a sample (Xu et al. 2015: 0.5)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0) & kFinite);
  app->add_option(
         "--hard-entropy", m.hard.entropy,
         "rnn, --hard-train reinforce: weight lambda of the entropy bonus -lambda H(alpha_i)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0) & kFinite);
  add_enum_option(*app, "--hard-baseline", m.hard.baseline,
                  "rnn, --hard-train reinforce: REINFORCE's baseline: a moving average of the "
                  "log-likelihood per token: global (one for all, Xu et al. 2015) or word (one "
                  "per target word, which takes each word's difficulty out of the advantage); or "
                  "expected: each token's log-likelihood with the expected context sum_j "
                  "alpha_ij h_j in place of the sample (a soft-attention baseline, Deng et al. "
                  "2018; one more read-out per step; needs --hard-discount 0)");
  app->add_option("--hard-discount", m.hard.discount,
                  "rnn, --hard-train reinforce: discount gamma of the return R_t = sum over t' >= "
                  "t of gamma^(t'-t) log p(y_t') (1: the whole reward to go; 0: the step's own "
                  "output only, lower variance, blind to later steps)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0) & kFinite);
  app->add_option("--hard-tau", m.hard.tau,
                  "rnn, --hard-train gumbel: the first temperature tau_0; step t uses "
                  "max(--hard-tau-min, tau_0 exp(-(--hard-anneal) t))")
      ->capture_default_str()
      ->check(CLI::Range(1e-3, 1e3));
  app->add_option("--hard-tau-min", m.hard.tau_min,
                  "rnn, --hard-train gumbel: the lowest temperature")
      ->capture_default_str()
      ->check(CLI::Range(1e-3, 1e3));
  app->add_option("--hard-anneal", m.hard.anneal,
                  "rnn, --hard-train gumbel: the temperature's decay rate per step")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app->add_flag("--hard-sample", m.hard.sample,
                "rnn, --attention hard: decoding samples j ~ alpha_i instead of taking the argmax");
  app->add_option("--monotonic-noise", m.monotonic_noise,
                  "rnn and transformer: monotonic/mocha training adds N(0, sigma^2) to the "
                  "energies before the sigmoid, which pushes the stopping probabilities towards 0 "
                  "or 1 (Raffel et al. 2017; 0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0) & kFinite);
  app->add_option("--wait-k", m.wait_k,
                  "rnn and transformer: wait-k (Ma et al. 2019), prefix-to-prefix: output i "
                  "attends to the first i + k source tokens only, in training and decoding (rnn: "
                  "bahdanau, luong-*; with --unidirectional or --causal-encoder, translate "
                  "--online reads k tokens, then one per output); 0: off")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  app->add_option("--wait-k-sample", config.wait_k_sample,
                  "rnn and transformer with --wait-k: multi-path training (Elbayad et al. 2020), "
                  "each batch at a k drawn uniformly from 1..KMAX, so that one model decodes at "
                  "any k (heed translate --wait-k; --wait-k stays the default and what "
                  "validation decodes with); 0: every batch at --wait-k")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  app->add_option("--latency-weight", latency.weight,
                  "rnn and transformer, --attention monotonic|mocha: training adds this weight "
                  "times the expected delay (source tokens read before each output; a stop that "
                  "runs off the end reads them all), the transformer's gathered over its heads by "
                  "--latency-gather, trading quality for latency as Ma et al. 2020's L_avg (and "
                  "MILk's expected latency, Arivazhagan et al. 2019) does; 0: none")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0) & kFinite);
  add_enum_option(
      *app, "--latency-gather", latency.gather,
      "transformer, with --latency-weight: a sentence's delay from its heads' (every "
      "layer's) mean delays: mean | weighted, their softmax-weighted average, a soft "
      "maximum that follows the heads online decoding waits for (Ma et al. 2020); mean is "
      "the default: weighted puts the gradient on the slowest heads, and a head that has "
      "run off the source (stopping probabilities near 0) gets almost none, so it stays there");
  app->add_option("--latency-warmup", latency.warmup,
                  "rnn and transformer, with --latency-weight or --latency-var-weight: the "
                  "weights ramp up linearly from 0 over this many updates, so that the decoder "
                  "learns to use its context before the term pushes the stops back (from the "
                  "first update a large weight locks them onto the first words); 0: full weight "
                  "from the start")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  app->add_option("--latency-var-weight", latency.var_weight,
                  "transformer, --attention monotonic|mocha: training adds this weight times the "
                  "variance of the heads' expected delays at each output (Ma et al. 2020's L_var: "
                  "the heads kept together); 0: none")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0) & kFinite);
  app->add_option("--head-drop", head_drop,
                  "transformer, --attention monotonic|mocha: HeadDrop (Inaguma et al. 2020), "
                  "each head of each sentence masked out in training with this probability and "
                  "the kept ones scaled up, so that every head has to align and none is left to "
                  "stop on the first word; 0: none")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.99));
  app->add_option("--monotonic-layers", monotonic_layers,
                  "transformer, --attention monotonic|mocha: only the top N decoder layers have "
                  "monotonic heads; the layers below have no cross-attention and read the target "
                  "alone (Inaguma et al. 2020 prune the lower layers' heads, which stop on the "
                  "first word instead of aligning); 0: every layer")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1024}));
  app->add_option("--monotonic-policy", monotonic_policy,
                  "transformer, --attention monotonic|mocha: heads = a stop per head of every "
                  "layer (Ma et al. 2020's MMA); shared = one stopping head in the lowest "
                  "attending layer, and every head of every layer attends over the chunk ending "
                  "at its stop (MILk's policy, Arivazhagan et al. 2019: with --chunk >= the "
                  "longest source, every head sees the whole prefix read, as in wait-k)")
      ->capture_default_str()
      ->check(CLI::IsMember({"heads", "shared"}));
  app->add_option(
         "--monotonic-bias", m.monotonic_bias,
         "rnn and transformer: initial value of monotonic/mocha's energy bias r (negative: early "
         "alignments move on rather than stop)")
      ->capture_default_str()
      ->check(CLI::Range(-100.0, 100.0) & kFinite);
  app->option_defaults()->group("Model: transformer (also the classifier's encoder)");
  app->add_option("--dec-layers", dec_layers,
                  "transformer and conv: decoder layers (default: --layers)")
      ->check(CLI::Range(1, 1024));
  app->add_option("--d-model", tf.layer.d_model, "transformer: model width d_model")
      ->capture_default_str()
      ->check(kSize);
  app->add_option("--heads", tf.layer.heads, "transformer: attention heads (d_k = d_model / h)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  app->add_option("--ff", tf.layer.ff, "transformer: feed-forward inner size d_ff")
      ->capture_default_str()
      ->check(kSize);
  add_enum_option(*app, "--norm", norm,
                  "transformer: LayerNorm placement, post (Vaswani et al. 2017: x + F(x), then "
                  "LN) | pre (x + F(LN(x)), a final LN; trains without warmup trouble). "
                  "Default: post (translation, as the paper), pre (classify)");
  add_enum_option(*app, "--activation", activation, "transformer: feed-forward activation");
  add_enum_option(*app, "--positions", positions,
                  "transformer: sinusoidal (Vaswani et al. 2017) or learned position embeddings");
  app->add_option(
         "--max-positions", tf.max_positions,
         "transformer and conv: longest sequence (source or output) the position table holds")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app->add_flag("--untied-output", untied_output,
                "transformer: a separate output matrix (default: tied to the target embedding, "
                "Press & Wolf 2017)");
  app->add_flag("--causal-encoder", tf.layer.causal_encoder,
                "transformer: encoder self-attention over earlier positions only, so that a "
                "source prefix's states do not change as the source goes on (online decoding "
                "with --wait-k)");
  app->add_flag(
      "--share-embeddings", tf.share_embeddings,
      "transformer: one embedding table and one joint vocabulary for both sides (with spm "
      "on both sides: one SentencePiece model trained on both, as joint BPE)");
  app->option_defaults()->group("Model: ctc");
  app->add_option("--encoder", encoder,
                  "ctc and rnn: the encoder, rnn (--layers of bidirectional --cell; ctc: default "
                  "lstm and 2 layers, sized by --embed and --hidden) | transformer (ctc: the "
                  "transformer flags) | conv (residual gated dilated convolutions: --embed, "
                  "--conv-channels, --conv-kernel, --conv-dilations, --conv-causal) | kim "
                  "(Kim 2014's convolutions of several widths: --embed, --kim-widths, --kim-maps)")
      ->check(CLI::IsMember({"rnn", "transformer", "conv", "kim"}))
      ->capture_default_str();
  app->option_defaults()->group(
      "Model: convolutional encoder (--encoder conv) and ConvS2S (--model conv)");
  app->add_option("--conv-channels", conv.channels,
                  "conv: channels C of every layer (--model conv: default 512)")
      ->capture_default_str()
      ->check(kSize);
  app->add_option("--conv-kernel", conv.kernel, "conv: kernel width k")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app->add_option("--conv-dilations", conv.dilations,
                  "conv: one dilation per layer (WaveNet: 1 2 4 8 ...); the receptive field "
                  "1 + sum (k - 1) d is printed at the start")
      ->capture_default_str()
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 16));
  app->add_flag("--conv-weight-norm", conv.weight_norm,
                "conv: weight normalisation of every convolution, w = g v / ||v|| (Salimans & "
                "Kingma 2016; ConvS2S)");
  app->add_flag("--conv-causal", conv.causal,
                "conv: causal convolutions (output t sees inputs up to t: online decoding); "
                "default: centred (k odd)");
  app->option_defaults()->group("Model: Kim's convolutions (--encoder kim, --model kim-cnn)");
  app->add_option("--kim-widths", kim.widths,
                  "kim: the filter widths h, one set of --kim-maps filters each (Kim 2014: 3 4 5)")
      ->capture_default_str()
      ->delimiter(',')
      ->check(CLI::Range(1, 64));
  app->add_option("--kim-maps", kim.maps, "kim: feature maps per width (Kim 2014: 100)")
      ->capture_default_str()
      ->check(kSize);
  app->option_defaults()->group("Model: ctc");
  app->add_option("--upsample", ctc.upsample,
                  "ctc: positions per source unit, each unit repeated K times (CTC emits at most "
                  "one label per position, and a blank between repeats: G2P needs K >= 2 for "
                  "words with more phones than letters, X -> EH K S)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app->add_option(
         "--dropout", dropout,
         "Dropout (default: rnn 0, on embeddings, between layers and before the "
         "read-out; transformer 0.1, on embeddings and every sub-layer output; conv 0.25, on "
         "embeddings, every convolution's input and the read-out)")
      ->group("Task and model")
      ->check(kProbability);
  app->option_defaults()->group("Training");
  app->add_option("--batch", c.batch_size,
                  "Sentences per batch (also sets the length-sorting window: 50 batches)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  app->add_option("--batch-tokens", c.batch_tokens,
                  "Batch by size instead: at most this many padded positions per batch "
                  "(sentences x longest side, as fairseq's --max-tokens); 0: by sentences")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 30));
  app->add_option("--epochs", c.epochs, "Maximum epochs")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app->add_option(
         "--max-minutes", c.max_minutes,
         "Training time budget in minutes, counted over a run and its resumptions (0: none)")
      ->capture_default_str()
      ->check(kNonNegative);
  app->add_option("--max-steps", c.max_steps, "Stop after this many updates (0: none)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app->add_option("--lr", c.lr,
                  "Adam learning rate: the peak rate after --warmup; then cut by --lr-decay when "
                  "dev cross-entropy stops improving (plateau) or decayed as 1/sqrt(step)")
      ->capture_default_str()
      ->check(kPositive);
  add_enum_option(*app, "--lr-schedule", lr_schedule,
                  "plateau, or inverse-sqrt (Vaswani et al. 2017, eq. 3, peaking at --lr after "
                  "--warmup steps). Default: the family's (rnn plateau, transformer "
                  "inverse-sqrt)");
  app->add_option("--warmup", c.warmup,
                  "Steps of linear warmup to --lr (default: rnn 0, transformer 4000)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--cooldown", c.cooldown,
                  "Share of the training budget (--max-minutes, --max-steps or --epochs, "
                  "whichever ends first) over which the rate falls linearly to 0 at the end: "
                  "warmup-stable-decay (Hu et al. 2024; Hägele et al. 2024); 0: none")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app->add_option("--adam-beta2", c.adam_beta2,
                  "Adam second-moment decay (default: rnn 0.999, transformer 0.98 as the paper)")
      ->check(kProbability);
  app->add_option("--weight-decay", c.weight_decay,
                  "Decoupled weight decay: AdamW's p -= lr * wd * p every step (Loshchilov & "
                  "Hutter 2019); 0: plain Adam")
      ->capture_default_str()
      ->check(kNonNegative);
  app->add_option("--exponential-smoothing", c.smoothing,
                  "Validate and save the weights' moving average: after update t, s = (1 - a) s + "
                  "a w with a = max(F, 1/t), the mean of all updates' weights until t = 1/F, an "
                  "exponential moving average over about the last 1/F updates after (Polyak & "
                  "Juditsky 1992; Marian's flag); training goes on with w. 0: off")
      ->capture_default_str()
      ->check(kProbability);
  app->add_flag("--adadelta", c.adadelta,
                "Adadelta (Zeiler 2012: rho 0.95, eps 1e-6; Kim 2014's optimizer) instead of "
                "Adam; give --lr 1 for Zeiler's form (--weight-decay: L2 on the gradient)");
  app->add_option("--lr-decay", c.lr_decay,
                  "Factor applied to the LR when dev cross-entropy stops improving")
      ->capture_default_str()
      ->check(kFraction);
  app->add_option("--lr-patience", c.lr_patience,
                  "Epochs without a better dev cross-entropy tolerated before each LR cut")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app->add_option("--clip", c.clip, "Global gradient-norm clipping")
      ->capture_default_str()
      ->check(kPositive);
  app->add_option("--label-smoothing", c.label_smoothing, "Label smoothing epsilon")
      ->capture_default_str()
      ->check(kProbability);
  app->add_option("--patience", c.patience,
                  "Early stopping: epochs in a row without a better dev metric tolerated; the "
                  "next one ends training (3: the fourth epoch in a row without one stops it)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app->add_option("--checkpoint-every", c.checkpoint_every, "Steps between checkpoints")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app->add_option("--valid-every", c.valid_every,
                  "Also validate (and keep the best model) every N steps inside an epoch; "
                  "0: at epoch ends only")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app->add_option("--valid-max", c.valid_max, "Dev sentences decoded for the metric (0: all)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app->add_option("--keep-epochs", c.keep_epochs,
                  "Keep the weights of the last N epochs in DIR/epochs/ for `heed average` "
                  "(checkpoint averaging); 0: none")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app->add_option("--seed", c.seed, "Random seed")->capture_default_str();
  add_enum_option(*app, "--precision", precision,
                  "Products of the training step's linear layers and recurrent cells: bfloat16 "
                  "rounds the operands "
                  "to bf16 (sums, weights and the rest in fp32: mixed precision; about twice the "
                  "GEMM speed on CPUs with AVX512_BF16)");
  app->add_option("--save", c.save_dir, "Model directory (required, except with --bench)");
  app->add_flag("--bench", c.measure,
                "Measure the training speed instead (heed bench train is the same): train for "
                "--max-minutes or --max-steps without validating or keeping anything (--save "
                "optional: a temporary directory), the progress on stderr, then one JSON line on "
                "stdout: target tokens/s, updates/s, peak memory, FLOPs per target token, "
                "GFLOP/s and their fraction of the GEMM rate this CPU reaches (mfu), the CPU");
  app->add_flag("--resume", c.resume, "Continue from the checkpoint in the model directory");
  app->add_flag("--force-resume", c.force_resume,
                "With --resume: continue even when the data, --seed or model options differ from "
                "the checkpoint's (listed otherwise as an error)");
  app->add_flag("--overwrite", c.overwrite,
                "Start over in a model directory that holds a run, removing its model, "
                "checkpoint, log and vocabularies (without it, such a directory is refused)");
  app->add_option("--threads", threads, "Threads (0 = all cores)");
}

std::span<const Named<Task>> names(Task) {
  static constexpr Named<Task> kNames[] = {{Task::Translate, "translate"},
                                           {Task::Classify, "classify"}};
  return kNames;
}

std::span<const Named<LrSchedule>> names(LrSchedule) {
  static constexpr Named<LrSchedule> kNames[] = {{LrSchedule::Plateau, "plateau"},
                                                 {LrSchedule::InverseSqrt, "inverse-sqrt"}};
  return kNames;
}

namespace {
ScheduleConfig::Kind schedule_kind(LrSchedule s) {
  return s == LrSchedule::InverseSqrt ? ScheduleConfig::Kind::InverseSqrt
                                      : ScheduleConfig::Kind::ReduceOnPlateau;
}
}  // namespace

namespace {
// Where training reports: stdout (stderr with --bench, whose JSON owns stdout); nowhere on the
// ranks of a data-parallel job other than 0, which speaks for them all.
std::ostream& training_log(bool bench) {
  static std::ostream nowhere(nullptr);
  if (!dist::world().root()) return nowhere;
  return bench ? std::cerr : std::cout;
}
}  // namespace

int TrainCommand::run() {
  dist::join_world();  // under mpirun: this process is one rank of a data-parallel job
  // the Transformer's layer flags, for translation and classification alike
  if (norm) transformer.layer.norm = *norm;
  transformer.layer.activation = activation;
  transformer.positions = positions;
  config.precision = precision;
  if (config.precision == Precision::bf16 && !kernels::bf16_native() && dist::world().root())
    std::cerr << "warning: this CPU has no AVX512_BF16: --precision bfloat16 is emulated, and "
                 "slower than float32\n";
  std::optional<BenchRun> bench;
  if (config.measure) bench.emplace(config);
  check(!config.save_dir.empty(), "train: --save DIR is required");
  if (task == Task::Classify) return run_classify(bench ? &*bench : nullptr);
  const ModelFamily& family = model_family(model, "--model");
  check(family.role == ModelRole::Seq2Seq, "train: --model ", model,
        " is a classifier: add --task classify");
  check(!config.train_src.empty(), "train: --train-src is required (or --task classify --train)");
  config.format = format;
  config.tsv_columns = parse_tsv_columns(tsv_columns);
  config.src_units = src_units;
  config.tgt_units = tgt_units;
  config.tgt_vocab.min_freq = config.src_vocab.min_freq;
  // the rnn's flags
  rnn.attention = attention;
  auto& enc = std::get<RnnEncoderConfig>(rnn.encoder);
  enc.cell = rnn.dec_cell = cell;
  if (layers >= 0) enc.layers = static_cast<int>(layers);
  if (dropout >= 0) rnn.dropout = dropout;
  // the transformer's
  transformer.enc_layers = layers >= 0 ? layers : 3;
  transformer.dec_layers = dec_layers >= 0 ? dec_layers : transformer.enc_layers;
  if (dropout >= 0) transformer.layer.dropout = dropout;
  transformer.tie_output = !untied_output;
  transformer.layer.wait_k = rnn.wait_k;  // --wait-k, for both families
  check(config.wait_k_sample == 0 || rnn.wait_k > 0,
        "--wait-k-sample trains a wait-k model at many k: give --wait-k too (the k it decodes "
        "with unless told)");
  // --encoder conv, for the rnn and ctc families
  conv.embed = enc.embed;
  conv.max_positions = transformer.max_positions;
  if (dropout >= 0) conv.dropout = dropout;
  check(encoder != "transformer" || family.name != std::string("rnn"),
        "--encoder transformer is for ctc models (an rnn model's: rnn or conv)");
  // the ctc's: the rnn's encoder flags (an LSTM of 2 layers unless told), or the transformer's
  kim.embed = enc.embed;
  if (encoder == "conv") {
    ctc.encoder = conv;
  } else if (encoder == "kim") {
    ctc.encoder = kim;
  } else if (encoder == "transformer") {
    TransformerLayerConfig layer = transformer.layer;
    layer.wait_k = 0;  // an encoder has no cross-attention
    ctc.encoder = TransformerEncoderConfig{.layer = layer,
                                           .layers = transformer.enc_layers,
                                           .positions = transformer.positions,
                                           .max_positions = transformer.max_positions};
  } else {
    RnnEncoderConfig e = enc;
    if (app->count("--cell") == 0) e.cell = CellKind::Lstm;
    if (layers < 0) e.layers = 2;
    ctc.encoder = e;
  }
  if (dropout >= 0) ctc.dropout = dropout;
  if (encoder == "kim") rnn.encoder = kim;
  if (encoder == "conv") rnn.encoder = conv;  // (last: `enc` refers to the rnn encoder until here)
  // --model conv: the conv flags given, ConvS2S's defaults for the rest
  if (app->count("--embed") > 0) convs2s.embed = enc.embed;
  if (app->count("--conv-channels") > 0) convs2s.channels = conv.channels;
  convs2s.kernel = conv.kernel;
  convs2s.weight_norm = conv.weight_norm;
  if (layers >= 0) convs2s.enc_layers = convs2s.dec_layers = layers;
  if (dec_layers >= 0) convs2s.dec_layers = dec_layers;
  if (dropout >= 0) convs2s.dropout = dropout;
  convs2s.max_positions = transformer.max_positions;
  // the chosen family's config (a new family: its flags above and one line here)
  config.model = family.default_config();
  const auto refuse_wait_k = [&](std::string_view why) {
    check(rnn.wait_k == 0 && config.wait_k_sample == 0,
          "--wait-k is for encoder-decoders (rnn, transformer); ", why);
  };
  std::visit(
      overloaded{[&](RnnSeq2SeqConfig& c) {
                   c = rnn;
                   c.latency = latency;
                 },
                 [&](TransformerSeq2SeqConfig& c) {
                   c = transformer;
                   if (app->count("--attention") == 0) return;
                   // --attention monotonic | mocha: monotonic multihead attention
                   check(attention == AttentionKind::Monotonic || attention == AttentionKind::Mocha,
                         "--attention ", attention_name(attention),
                         ": a transformer's cross-attention is multi-head (the default), "
                         "or monotonic | mocha in every head (Ma et al. 2020)");
                   check(rnn.wait_k == 0,
                         "--wait-k and --attention monotonic|mocha are two read/write "
                         "policies: give one");
                   c.layer.monotonic = MonotonicHeadsConfig{
                       .chunk = attention == AttentionKind::Mocha ? rnn.chunk : 0,
                       .bias = rnn.monotonic_bias,
                       .noise = rnn.monotonic_noise,
                       .head_drop = head_drop,
                       .layers = monotonic_layers,
                       .shared = monotonic_policy == "shared",
                       .latency = latency};
                 },
                 [&](ConvSeq2SeqConfig& c) {
                   refuse_wait_k("a conv model has no wait-k");
                   c = convs2s;
                 },
                 [&](CtcConfig& c) {
                   refuse_wait_k("a ctc model has no decoder to wait");
                   c = ctc;
                 }},
      config.model);
  const auto* tc = std::get_if<TransformerSeq2SeqConfig>(&config.model);
  const auto* rc = std::get_if<RnnSeq2SeqConfig>(&config.model);
  check(!latency.trains() || (tc != nullptr && tc->layer.monotonic) ||
            (rc != nullptr && rc->monotonic()),
        "--latency-weight and --latency-var-weight weigh the delays of monotonic attention: for "
        "--model rnn|transformer --attention monotonic|mocha");
  check(head_drop == 0.f || (tc != nullptr && tc->layer.monotonic),
        "--head-drop masks out heads of monotonic multihead attention: for --model transformer "
        "--attention monotonic|mocha");
  check(monotonic_layers == 0 || (tc != nullptr && tc->layer.monotonic),
        "--monotonic-layers places monotonic multihead attention: for --model transformer "
        "--attention monotonic|mocha");
  check(app->count("--monotonic-policy") == 0 || (tc != nullptr && tc->layer.monotonic),
        "--monotonic-policy chooses how monotonic multihead attention stops: for --model "
        "transformer --attention monotonic|mocha");
  check(tc == nullptr || tc->first_attending() >= 0, "--monotonic-layers ", monotonic_layers,
        ": the decoder has ", tc ? tc->dec_layers : 0, " layers");
  check(app->count("--latency-gather") == 0 || latency.weight > 0,
        "--latency-gather gathers the heads for --latency-weight: give a weight");
  check(latency.warmup == 0 || latency.trains(),
        "--latency-warmup ramps up --latency-weight or --latency-var-weight: give a weight");
  check(rc == nullptr || (latency.var_weight == 0 && app->count("--latency-gather") == 0),
        "--latency-var-weight and --latency-gather are for a transformer's heads: an rnn's "
        "monotonic attention is one head (--latency-weight alone)");
  // the optimiser: the family's recipe unless told otherwise
  const TrainingDefaults& d = family.defaults;
  config.schedule = schedule_kind(
      lr_schedule.value_or(d.inverse_sqrt ? LrSchedule::InverseSqrt : LrSchedule::Plateau));
  if (app->count("--warmup") == 0) config.warmup = d.warmup;
  if (app->count("--adam-beta2") == 0) config.adam_beta2 = d.adam_beta2;
  TrainResult r = train_seq2seq(config, training_log(bench.has_value()));
  if (!dist::world().root()) return 0;
  if (bench) {
    bench->report(r, config.precision);
    return 0;
  }
  std::cout << "best dev " << r.metric_name << " " << r.best_metric << " after " << r.steps
            << " steps, " << r.minutes << " min; model in " << config.save_dir << "\n";
  return 0;
}

// The classifier's flags: the loop's own, plus the shared model flags when given (their
// defaults are the classifier's, from Lin et al. 2017, not the RNN's or the translation
// Transformer's).
int TrainCommand::run_classify(const BenchRun* bench) {
  const bool transformer_encoder = model == "transformer";
  const bool conv_encoder = model == "conv", kim_encoder = model == "kim-cnn";
  check(model == "self-attentive" || transformer_encoder || conv_encoder || kim_encoder ||
            app->count("--model") == 0,
        "train --task classify: --model must be self-attentive, transformer, conv or kim-cnn");
  const ModelFamily& family = model_family(transformer_encoder ? kTransformerClassifier
                                           : conv_encoder      ? kConvClassifier
                                           : kim_encoder       ? kKimCnn
                                                               : kSelfAttentiveClassifier);
  ClassifyTrainConfig c = classify;
  static_cast<LoopOptions&>(c) = config;
  if (!train_trees.empty() || !valid_trees.empty() || !test_trees.empty()) {
    check(!train_trees.empty() && !valid_trees.empty(),
          "train --task classify: trees need --train-trees and --valid-trees (--test-trees "
          "optional)");
    check(c.train.empty() && c.valid.empty() && c.test.empty(),
          "train --task classify: give either --train/--valid/--test (labelled sentences) or "
          "--train-trees/--valid-trees/--test-trees (SST trees), not both");
    c.train = train_trees;
    c.valid = valid_trees;
    c.test = test_trees;
    c.trees = tree_classes;
  } else {
    check(app->count("--classes") == 0,
          "train --task classify: --classes goes with --train-trees (a labelled file's classes "
          "are its labels)");
  }
  c.units = src_units;
  c.vocab = config.src_vocab;
  ClassifierConfig& k = c.model;
  k.pooling = pooling.value_or(transformer_encoder           ? Pooling::Mean
                               : conv_encoder || kim_encoder ? Pooling::Max
                                                             : Pooling::Attention);
  if (conv_encoder || kim_encoder) {
    const auto& flags = std::get<RnnEncoderConfig>(rnn.encoder);
    k.kind = conv_encoder ? SentenceEncoder::Conv : SentenceEncoder::Kim;
    k.conv = conv;
    k.kim = kim;
    if (app->count("--embed") > 0) k.conv.embed = k.kim.embed = flags.embed;
    k.conv.max_positions = transformer.max_positions;
    if (dropout >= 0) k.conv.dropout = dropout;  // and the classifier's, below
    if (kim_encoder) {  // Kim's classifier: softmax(W c^ + b) with dropout 0.5 on c^
      if (app->count("--mlp-hidden") == 0) k.mlp_hidden = 0;
      if (dropout < 0) k.dropout = 0.5f;
    }
  }
  if (transformer_encoder) {
    k.kind = SentenceEncoder::Transformer;
    auto& tl = k.transformer;
    const auto& flags = transformer.layer;
    if (app->count("--d-model") > 0) tl.d_model = flags.d_model;
    if (app->count("--heads") > 0) tl.heads = flags.heads;
    if (app->count("--ff") > 0) tl.ff = flags.ff;
    if (norm) tl.norm = *norm;
    tl.activation = activation;
    if (layers >= 0) k.transformer_layers = layers;
    if (dropout >= 0) tl.dropout = dropout;
    k.dropout = tl.dropout;  // one rate for the layers and the MLP
    k.positions = positions;
    if (app->count("--max-positions") > 0) k.max_positions = transformer.max_positions;
  }
  if (app->count("--warmup") == 0) c.warmup = family.defaults.warmup;  // Transformer: ~2 epochs
  if (app->count("--cell") > 0) k.encoder.cell = cell;
  const auto& flags = std::get<RnnEncoderConfig>(rnn.encoder);  // --embed, --hidden, ...
  if (app->count("--embed") > 0) k.encoder.embed = flags.embed;
  if (app->count("--hidden") > 0) k.encoder.hidden = flags.hidden;
  if (app->count("--attn-dim") > 0) k.attn_dim = rnn.attn_dim;
  k.encoder.bidirectional = flags.bidirectional;
  if (layers >= 0) k.encoder.layers = static_cast<int>(layers);
  if (dropout >= 0) k.dropout = dropout;
  if (lr_schedule) c.schedule = schedule_kind(*lr_schedule);
  ClassifyResult r = train_classifier(c, training_log(bench != nullptr));
  if (!dist::world().root()) return 0;
  if (bench) {
    bench->report(r.loop, c.precision);
    return 0;
  }
  std::cout << "best dev acc " << r.loop.best_metric << " after " << r.loop.steps << " steps, "
            << r.loop.minutes << " min";
  if (r.test_accuracy >= 0) std::cout << "; test acc " << r.test_accuracy;
  std::cout << "; model in " << c.save_dir << "\n";
  return 0;
}

}  // namespace heed::cli
