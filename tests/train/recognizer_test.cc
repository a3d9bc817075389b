// A speech recognizer learns a spoken task made here: "words" of 2 to 5 letters of a-e, each
// letter a 150 ms tone of its own pitch followed by 50 ms of quiet, written as WAV files with a
// manifest. Trained through train() (the one way in, as the command line), the conv front end +
// BiLSTM + CTC transcribes unseen utterances with a character error rate under 10 %, its word
// timestamps cover the tones, and heed transcribe prints what the Recognizer returns; the model
// directory keeps its front end's normalisation, and a bad audio file among the inputs is an
// error naming it; POST /transcribe on heed serve answers the same.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <future>
#include <iostream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "heed/decode/recognizer.h"
#include "heed/decode/recognizer_stream.h"
#include "heed/io/audio.h"
#include "heed/io/model_dir.h"
#include "heed/io/safetensors.h"
#include "heed/metrics/metrics.h"
#include "heed/nn/audio_front_end.h"
#include "heed/serve/server.h"
#include "heed/train/train_options.h"
#include "support/temp_dir.h"
#include "support/tones.h"

namespace heed {
namespace {

// 40 new tone words (seeded by `seed`) transcribed greedily and by a beam of 4 with a CER under
// 10 % (`log`: the training's, shown on failure).
void expect_transcribes(const Recognizer& rec, unsigned seed, const std::string& log) {
  const auto [refs, audio] = tone_words(40, seed);
  for (int beam : {1, 4}) {
    const auto out = rec.transcribe({audio.begin(), audio.end()}, {.beam = beam});
    std::vector<std::string> hyps;
    for (const auto& n : out) hyps.push_back(n.at(0).text);
    const ErrorRate cer = char_error_rate(hyps, refs);
    EXPECT_LT(cer.percent(), 10.0) << "beam " << beam << ": " << cer.str("CER") << "\n" << log;
  }
}

// `heed ARGS...`: its stdout (captured, and released whatever happens) and its status.
std::pair<std::string, int> run_heed(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  try {
    const int status = cli::run(static_cast<int>(argv.size()), argv.data());
    return {::testing::internal::GetCapturedStdout(), status};
  } catch (...) {
    ::testing::internal::GetCapturedStdout();
    throw;
  }
}

TEST(Recognizer, LearnsToneWordsEndToEnd) {
  testing::TempDir dir;
  make_set(dir, "train", 400, 1);
  const std::vector<std::string> dev = make_set(dir, "dev", 30, 2);
  TrainOptions o = tone_options(dir, "m", 500);
  o.model = "ctc";
  // waveform augmentation at every step: speed 0.9 / 1.0 / 1.1 and, half the time, noise
  o.seq2seq.wave_augment = {.speed_perturb = true, .noise_prob = 0.5, .snr_lo = 20, .snr_hi = 30};
  o.shape.hidden = 48;
  o.shape.embed = 48;
  o.shape.layers = 1;
  std::ostringstream log;
  const TrainOutcome r = train(o, log);
  EXPECT_LT(r.loop.best_metric, 25.0) << log.str();  // dev WER (one word per utterance)
  EXPECT_NE(log.str().find("conv2d x4 front end (8 channels, 23 bins -> 48)"), std::string::npos)
      << log.str();
  // --valid-max: validation read the first 20 of the 30 dev utterances
  EXPECT_NE(log.str().find("dev.tsv: 20 utterances"), std::string::npos) << log.str();

  const Recognizer rec(dir / "m");
  EXPECT_EQ(rec.files().config.at("audio").at("mean").size(), 23u);  // stored normalisation
  const auto [refs, audio] = tone_words(40, 3);
  const auto out = rec.transcribe({audio.begin(), audio.end()}, {.timestamps = true});
  std::vector<std::string> hyps;
  for (const auto& n_best : out) hyps.push_back(n_best.at(0).text);
  const ErrorRate cer = char_error_rate(hyps, refs);
  EXPECT_LT(cer.percent(), 10.0) << cer.str("CER") << "\n" << log.str();
  // one word per utterance: from about the first tone's start to about the last tone's end
  int timed = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (hyps[i] != refs[i] || out[i][0].words.size() != 1) continue;
    const WordTime& w = out[i][0].words[0];
    const double end = static_cast<double>(refs[i].size()) * (kTone + kGap) - kGap;
    EXPECT_LE(w.start, 0.2) << refs[i];
    EXPECT_NEAR(w.end, end, 0.2) << refs[i];
    ++timed;
  }
  EXPECT_GE(timed, 30);
  // a recognizer's cells started as PyTorch's (nn/rnn.h RnnInit), and config.json says so
  EXPECT_EQ(rec.files().config.at("rnn_init"), "uniform");

  // int8 weights (--compute-type int8) transcribe nearly as the float32 ones
  const Recognizer rec8(dir / "m", {}, ComputeType::Int8);
  const auto out8 = rec8.transcribe({audio.begin(), audio.end()}, {});
  std::vector<std::string> hyps8;
  int same = 0;
  for (size_t i = 0; i < out8.size(); ++i) {
    hyps8.push_back(out8[i].at(0).text);
    same += hyps8.back() == hyps[i] ? 1 : 0;
  }
  EXPECT_LT(char_error_rate(hyps8, refs).percent(), 10.0);
  EXPECT_GE(same, 36) << "of 40";

  // heed transcribe prints the Recognizer's transcripts, in input order
  write_wav(dir / "a.wav", audio[0], kRate);
  write_wav(dir / "b.wav", audio[1], kRate);
  EXPECT_EQ(run_heed({"heed", "transcribe", "--model", dir / "m", dir / "a.wav", dir / "b.wav"}),
            std::make_pair(hyps[0] + "\n" + hyps[1] + "\n", 0));
  EXPECT_EQ(run_heed({"heed", "transcribe", "--model", dir / "m", "--compute-type", "int8",
                      dir / "a.wav", dir / "b.wav"}),
            std::make_pair(hyps8[0] + "\n" + hyps8[1] + "\n", 0));
  // a file that is not audio is an error naming it
  {
    std::ofstream bad(dir / "bad.wav");
    bad << "not a RIFF file";
  }
  try {
    run_heed({"heed", "transcribe", "--model", dir / "m", dir / "a.wav", dir / "bad.wav"});
    ADD_FAILURE() << "bad.wav was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.wav"), std::string::npos) << e.what();
  }

  // POST /transcribe answers what heed transcribe prints: the WAV as the body, and as a
  // multipart/form-data file; a body that is not audio is 400
  serve::ServeOptions serving;
  serving.models = {{.name = "asr", .dir = dir / "m"}};
  serving.port = 0;
  serve::Server server(serving);
  std::promise<int> port;
  std::thread running([&] { server.run([&](int p) { port.set_value(p); }); });
  struct Stop {  // the server stopped and joined however the test ends
    serve::Server& server;
    std::thread& running;
    ~Stop() {
      server.stop();
      running.join();
    }
  } stop{server, running};
  httplib::Client client("127.0.0.1", port.get_future().get());
  const std::string wav = wav_bytes(audio[0], kRate);
  auto res = client.Post("/transcribe?timestamps=1", wav, "audio/wav");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  const nlohmann::json j = nlohmann::json::parse(res->body);
  EXPECT_EQ(j.at("text"), hyps[0]);
  EXPECT_EQ(j.at("words").size(), out[0][0].words.size());
  httplib::MultipartFormDataItems form = {{"audio", wav, "a.wav", "audio/wav"}};
  res = client.Post("/transcribe", form);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(nlohmann::json::parse(res->body).at("text"), hyps[0]);
  res = client.Post("/transcribe", std::string("not audio"), "audio/wav");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400) << res->body;
}

// MoChA over a causal listener (hard monotonic attention and a chunk of 2, Chiu & Raffel 2018)
// learns the task too, with more noise and a less negative bias than its text defaults (sigma
// 4, r = -2: with sigma 1 and r = -4 every energy stays below 0 on sources this long, and hard
// decoding stops nowhere) and no LR cut on the dev cross-entropy (hard decoding's, flat until
// the stops sharpen); its transcripts come from hard decoding, the one online decoding makes.
TEST(Recognizer, MochaOverACausalListenerLearnsToneWords) {
  testing::TempDir dir;
  make_set(dir, "train", 400, 4);
  make_set(dir, "dev", 30, 5);
  TrainOptions o = tone_options(dir, "mocha", 1500);
  o.seq2seq.lr_patience = 1000;
  o.seq2seq.valid_every = 250;
  o.model = "rnn";
  o.shape.attention = AttentionKind::Mocha;
  o.shape.monotonic_attention = {.chunk = 2, .noise = 4.f, .bias = -2.f};
  o.shape.direction = EncoderDirection::Forward;  // --unidirectional: it can stream
  o.shape.hidden = 32;
  o.shape.embed = 32;
  o.shape.attn_dim = 32;
  o.shape.tgt_embed = 16;
  o.shape.dec_hidden = 48;
  std::ostringstream log;
  const TrainOutcome r = train(o, log);
  EXPECT_LT(r.loop.best_metric, 30.0) << log.str();
  const Recognizer rec(dir / "mocha");
  const auto [refs, audio] = tone_words(40, 6);
  const auto out = rec.transcribe({audio.begin(), audio.end()}, {});
  std::vector<std::string> hyps;
  for (const auto& n : out) hyps.push_back(n.at(0).text);
  EXPECT_LT(char_error_rate(hyps, refs).percent(), 20.0) << log.str();
}

// Listen, Attend and Spell with location-aware attention (the rnn family over the front end),
// trained jointly with CTC, learns the same task; its transcripts come from greedy decoding and
// from the joint beam search.
TEST(Recognizer, ListenAttendSpellWithLocationAttentionLearnsToneWords) {
  testing::TempDir dir;
  make_set(dir, "train", 400, 4);
  make_set(dir, "dev", 30, 5);
  TrainOptions o = tone_options(dir, "las", 600);
  o.model = "rnn";
  o.shape.attention = AttentionKind::Location;
  o.shape.location.filters = 4;
  o.shape.location.width = 5;
  o.shape.cell = CellKind::Lstm;
  o.shape.hidden = 32;
  o.shape.embed = 32;
  o.shape.attn_dim = 32;
  o.shape.tgt_embed = 16;
  o.shape.dec_hidden = 48;
  o.shape.ctc_weight = 0.3f;  // joint CTC-attention
  std::ostringstream log;
  const TrainOutcome r = train(o, log);
  EXPECT_LT(r.loop.best_metric, 25.0) << log.str();
  EXPECT_NE(log.str().find("rnn/location, conv2d x4 front end"), std::string::npos) << log.str();
  const Recognizer rec(dir / "las");
  EXPECT_EQ(rec.files().config.at("attention"), "location");
  expect_transcribes(rec, 6, log.str());

  // where it listens: each unit's attention (a distribution over the model frames), drawn by
  // heed attention above the spectrogram (Chorowski et al. 2015's figure)
  std::mt19937 rng(10);
  const std::string word = random_word(rng);
  const std::vector<float> audio = speak(word, rng);
  const std::vector<Transcript> t =
      rec.transcribe({std::span<const float>(audio)}, {.alignment = true})[0];
  const std::vector<float> f = rec.features(audio);
  const auto frames = AudioFrontEndConfig::output_frames(static_cast<int64_t>(f.size()) / 23);
  ASSERT_EQ(t[0].alignment.size(), t[0].units.size() + 1);  // the units and </s>
  for (const auto& row : t[0].alignment) {
    ASSERT_EQ(static_cast<int64_t>(row.size()), frames);
    double sum = 0;
    for (float w : row) sum += w;
    EXPECT_NEAR(sum, 1.0, 1e-4);
  }
  write_wav(dir / "w.wav", audio, kRate);
  std::istringstream in(dir / "w.wav" + "\n");
  std::streambuf* was = std::cin.rdbuf(in.rdbuf());
  std::pair<std::string, int> drawn;
  try {
    drawn = run_heed({"heed", "attention", "--model", dir / "las", "--out", dir / "a.svg"});
  } catch (...) {
    std::cin.rdbuf(was);
    throw;
  }
  std::cin.rdbuf(was);
  EXPECT_EQ(drawn, std::make_pair(t[0].text + "\n", 0));
  std::ifstream svg_file(dir / "a.svg");
  const std::string svg((std::istreambuf_iterator<char>(svg_file)), {});
  EXPECT_NE(svg.find("log-mel filterbanks (23 bins"), std::string::npos);
  size_t cells = 0;
  for (size_t at = svg.find("class=\"cell\""); at != std::string::npos;
       at = svg.find("class=\"cell\"", at + 1))
    ++cells;
  // the alignment's (units + 1) rows and the spectrogram's 23 over the same frames
  EXPECT_EQ(cells, (t[0].units.size() + 1 + 23) * static_cast<size_t>(frames));
}

// The Speech-Transformer (Dong et al. 2018: the transformer family over the same front end),
// trained jointly with CTC, learns the task too; greedy and joint beam search transcribe it.
TEST(Recognizer, SpeechTransformerLearnsToneWords) {
  testing::TempDir dir;
  make_set(dir, "train", 400, 7);
  make_set(dir, "dev", 30, 8);
  TrainOptions o = tone_options(dir, "st", 600);
  o.model = "transformer";
  o.shape.d_model = 48;
  o.shape.heads = 4;
  o.shape.ff = 96;
  o.shape.layers = 2;
  o.shape.dec_layers = 1;
  o.shape.dropout = 0.f;
  o.shape.ctc_weight = 0.3f;  // joint CTC-attention
  o.warmup = 100;
  o.seq2seq.lr = 2e-3f;
  std::ostringstream log;
  const TrainOutcome r = train(o, log);
  EXPECT_LT(r.loop.best_metric, 25.0) << log.str();
  EXPECT_NE(log.str().find("conv2d x4 front end (8 channels, 23 bins -> 48), joint CTC 0.3"),
            std::string::npos)
      << log.str();
  const Recognizer rec(dir / "st");
  EXPECT_EQ(rec.files().config.at("model"), "transformer");
  expect_transcribes(rec, 9, log.str());
}

// A chunked Transformer encoder under CTC (--encoder transformer --encoder-chunk 4
// --left-chunks 2 --lookahead 2: each position sees its 160 ms chunk, 320 ms before it and, in
// the first layer, 80 ms after it) learns the task, and a stream of each utterance in 100 ms
// pieces gives what transcribing it whole gives.
TEST(Recognizer, ChunkedTransformerCtcLearnsToneWordsAndStreamsThem) {
  testing::TempDir dir;
  make_set(dir, "train", 400, 10);
  make_set(dir, "dev", 30, 11);
  TrainOptions o = tone_options(dir, "chunked", 600);
  o.model = "ctc";
  o.shape.encoder = EncoderKind::Transformer;
  o.shape.d_model = 48;
  o.shape.heads = 4;
  o.shape.ff = 96;
  o.shape.layers = 2;
  o.shape.norm = NormPlacement::Pre;
  o.shape.dropout = 0.f;
  o.shape.encoder_chunk = 4;
  o.shape.left_chunks = 2;
  o.shape.lookahead = 2;
  o.warmup = 100;
  o.seq2seq.lr = 2e-3f;
  std::ostringstream log;
  const TrainOutcome r = train(o, log);
  EXPECT_LT(r.loop.best_metric, 25.0) << log.str();
  EXPECT_NE(log.str().find("2-layer transformer encoder, d 48, chunks of 4 (2 to the left, "
                           "lookahead 2)"),
            std::string::npos)
      << log.str();
  const Recognizer rec(dir / "chunked");
  expect_transcribes(rec, 12, log.str());
  const auto [refs, audio] = tone_words(10, 13);
  const auto whole = rec.transcribe({audio.begin(), audio.end()}, {});
  for (size_t u = 0; u < audio.size(); ++u) {
    RecognizerStream s(rec, {.partials = false}, [] { return 0.0; });
    std::string text;
    const std::span<const float> a(audio[u]);
    const size_t step = kRate / 10;
    for (size_t i = 0; i < a.size(); i += step)
      for (const StreamResult& res : s.push(a.subspan(i, std::min(step, a.size() - i))))
        text += res.text;
    for (const StreamResult& res : s.finish()) text += res.text;
    EXPECT_EQ(text, whole[u].at(0).text) << refs[u];
  }
}

// --valid-bleu (speech translation): validation scores the dev decodes by corpus BLEU; the best
// figure the training reports is the BLEU of the kept model's dev transcripts (the first 20 of
// dev, as --valid-max says), not their WER. A text corpus refuses the flag.
TEST(Recognizer, ValidationScoresTheDevSetByBleu) {
  testing::TempDir dir;
  make_set(dir, "train", 400, 14);
  const std::vector<std::string> dev = make_set(dir, "dev", 30, 15);
  TrainOptions o = tone_options(dir, "bleu", 100);
  o.model = "ctc";
  o.shape.hidden = 48;
  o.shape.embed = 48;
  o.shape.layers = 1;
  o.seq2seq.valid_bleu = true;
  std::ostringstream log;
  const TrainOutcome r = train(o, log);
  EXPECT_EQ(r.loop.metric_name, "BLEU") << log.str();
  EXPECT_NE(log.str().find("BLEU"), std::string::npos) << log.str();
  // the dev set's first 20 utterances (one tone word each: BLEU has no 2-grams to match, so
  // it is 0 here where WER is not), transcribed by the kept model
  std::vector<std::string> refs(dev.begin(), dev.begin() + 20), hyps;
  std::vector<std::vector<float>> audio;
  for (int i = 0; i < 20; ++i)
    audio.push_back(read_audio(dir / ("dev-" + std::to_string(i) + ".wav")).samples);
  const Recognizer rec(dir / "bleu");
  for (const auto& n : rec.transcribe({audio.begin(), audio.end()}, {}))
    hyps.push_back(n.at(0).text);
  EXPECT_NEAR(r.loop.best_metric, corpus_bleu(hyps, {refs}).score, 1e-9) << log.str();
  EXPECT_NE(r.loop.best_metric, word_error_rate(hyps, refs).percent()) << log.str();
  try {
    TrainOptions text;
    text.seq2seq.train_src = HEED_SOURCE_DIR "/tests/golden/inputs/cmudict.txt";
    text.seq2seq.save_dir = dir / "text";
    text.seq2seq.valid_bleu = true;
    std::ostringstream text_log;
    train(text, text_log);
    ADD_FAILURE() << "--valid-bleu on text was not refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--valid-bleu is for speech"), std::string::npos)
        << e.what();
  }
}

// --init-encoder: an attention model started from a CTC recognizer of the same listener shape
// holds the recognizer's front end and encoder (its weights, bar the few updates at a learning
// rate of 1e-9, and its feature normalisation), and its own decoder; a text run, and a front end
// of another shape, are refused naming the flag.
TEST(Recognizer, InitEncoderStartsFromATrainedRecognizersListener) {
  testing::TempDir dir;
  make_set(dir, "train", 40, 16);
  make_set(dir, "dev", 4, 17);
  TrainOptions asr = tone_options(dir, "asr", 4);
  asr.model = "ctc";
  asr.shape.hidden = 16;
  asr.shape.embed = 16;
  asr.shape.layers = 1;
  asr.shape.cell = CellKind::Lstm;  // (the rnn family's own default is the GRU)
  std::ostringstream log;
  train(asr, log);
  // the second run's own training set is another (its normalisation differs): the recognizer's
  // must be the one kept
  make_set(dir, "train2", 40, 18);
  TrainOptions st = tone_options(dir, "st", 2);
  st.seq2seq.train_src = dir / "train2.tsv";
  st.model = "rnn";
  st.shape = asr.shape;
  st.shape.direction = EncoderDirection::Both;
  st.shape.attn_dim = 8;
  st.shape.tgt_embed = 8;
  st.shape.dec_hidden = 16;
  st.seq2seq.lr = 1e-9f;
  st.seq2seq.init_encoder = dir / "asr";
  std::ostringstream st_log;
  train(st, st_log);
  EXPECT_NE(st_log.str().find("front end and encoder"), std::string::npos) << st_log.str();
  const Safetensors a = read_safetensors(dir / "asr/model.safetensors");
  const Safetensors b = read_safetensors(dir / "st/model.safetensors");
  int64_t shared = 0;
  for (const auto& [name, t] : b.tensors) {
    const bool listener = name.starts_with("front/") || name.starts_with("encoder/");
    ASSERT_EQ(a.tensors.contains(name), listener) << name;
    if (!listener) continue;
    ++shared;
    const Tensor& u = a.tensors.at(name);
    for (int64_t i = 0; i < t.numel(); ++i) ASSERT_NEAR(t.data()[i], u.data()[i], 1e-5) << name;
  }
  EXPECT_GE(shared, 6);
  EXPECT_EQ(read_json(dir / "st/config.json").at("audio"),
            read_json(dir / "asr/config.json").at("audio"));
  auto refused = [&](TrainOptions o, const std::string& save, const std::string& why) {
    o.seq2seq.save_dir = dir / save;
    try {
      std::ostringstream l;
      train(o, l);
      ADD_FAILURE() << save << " was not refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  TrainOptions channels = st;
  channels.seq2seq.front_channels = 4;
  refused(channels, "channels", "--front-channels");
  TrainOptions text;
  text.seq2seq.train_src = HEED_SOURCE_DIR "/tests/golden/inputs/cmudict.txt";
  text.seq2seq.init_encoder = dir / "asr";
  refused(text, "text", "--init-encoder starts a speech model");
}

}  // namespace
}  // namespace heed
