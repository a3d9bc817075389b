// Streaming recognition by monotonic attention (Seq2SeqModel::attention_stream): a MoChA
// recognizer over a causal listener (the rnn family, --unidirectional) reads frames in pieces of
// any size and writes what greedy decoding of the whole utterance writes (ids, log-probabilities,
// each unit's stop), each unit once its attention stops on audio heard — most before the
// utterance ends —; a step that runs past the audio heard waits for more and is taken again.
// RecognizerStream refuses the models that cannot stream, and the options they cannot take,
// naming why.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "heed/data/vocab.h"
#include "heed/decode/greedy.h"
#include "heed/decode/recognizer_stream.h"
#include "heed/io/safetensors.h"
#include "heed/kernels/random.h"
#include "heed/models/rnn_seq2seq.h"
#include "heed/util/error.h"
#include "support/model_copy.h"
#include "support/stream_view.h"
#include "support/temp_dir.h"
#include "support/thread_cpu.h"
#include "support/tones.h"

namespace heed {
namespace {

constexpr int64_t kBins = 13;

// A MoChA recognizer (w = 2) over a causal listener, its weights random: r = 0 puts p_ij near
// 1/2, so its stops fall a few positions apart and often past what a piece of audio brought.
RnnSeq2SeqConfig mocha_config() {
  RnnSeq2SeqConfig c;
  c.encoder = RnnEncoderConfig{.cell = CellKind::Lstm,
                               .vocab = 0,
                               .embed = 24,
                               .hidden = 16,
                               .layers = 2,
                               .bidirectional = false};
  c.tgt_vocab = Vocab::kSpecials + 6;
  c.tgt_embed = 8;
  c.dec_hidden = 16;
  c.dec_cell = CellKind::Lstm;
  c.attention = AttentionKind::Mocha;
  c.attn_dim = 12;
  c.monotonic_attention = {.chunk = 2, .noise = 1.f, .bias = 0.f};
  AudioFrontEndConfig front;
  front.features = kBins;
  front.channels = 4;
  front.dim = 24;
  for (int64_t f = 0; f < kBins; ++f) {
    front.mean.push_back(0.f);
    front.stddev.push_back(1.f);
  }
  c.set_audio(front);
  return c;
}

// An utterance of random frames [frames, kBins], and it as a batch of one.
std::vector<float> random_frames(int64_t frames, Rng& rng) {
  std::vector<float> x(static_cast<size_t>(frames * kBins));
  for (float& v : x) v = static_cast<float>(rng.normal());
  return x;
}
Seq2SeqBatch batch_of(const std::vector<float>& x) {
  return make_audio_batch({std::span<const float>(x)}, kBins, {{}},
                          AudioFrontEndConfig::kMinFrames);
}

// A one-segment stream's tokens end with its </s>, at its last position: the units before it.
std::vector<AttentionStream::Token> without_eos(std::vector<AttentionStream::Token> got,
                                                int64_t positions) {
  EXPECT_FALSE(got.empty());
  if (got.empty()) return got;
  EXPECT_EQ(got.back().id, Vocab::kEos);
  EXPECT_LT(got.back().stop, positions);
  got.pop_back();
  for (const AttentionStream::Token& t : got) EXPECT_NE(t.id, Vocab::kEos);
  return got;
}

// The tokens stream `s` writes for frames x [n, bins] given in pieces of 1..most frames (most 0:
// in one piece), finish()'s included; `early`, when given: how many came before finish().
std::vector<AttentionStream::Token> pushed(AttentionStream& s, std::span<const float> x,
                                           int64_t bins, Rng& rng, int64_t most,
                                           int64_t* early = nullptr) {
  const auto frames = static_cast<int64_t>(x.size()) / bins;
  std::vector<AttentionStream::Token> got;
  for (int64_t t = 0; t < frames;) {
    const int64_t n = most == 0 ? frames : std::min(frames - t, 1 + rng.below(most));
    const auto y = s.push(x.subspan(static_cast<size_t>(t * bins), static_cast<size_t>(n * bins)));
    got.insert(got.end(), y.begin(), y.end());
    t += n;
  }
  if (early) *early += static_cast<int64_t>(got.size());
  const auto last = s.finish();
  got.insert(got.end(), last.begin(), last.end());
  return got;
}

// The tokens a stream of `model` writes for x given in pieces of 1..12 frames; `early`: how
// many came before finish().
std::vector<AttentionStream::Token> streamed(const Seq2SeqModel& model, const std::vector<float>& x,
                                             Rng& rng, int64_t& early) {
  std::unique_ptr<AttentionStream> s = model.attention_stream(10);
  std::vector<AttentionStream::Token> got = pushed(*s, x, kBins, rng, 12, &early);
  return without_eos(std::move(got), s->positions());
}

// Frames given in pieces of any size make the tokens greedy decoding makes of the whole
// utterance: the same ids, log-probabilities and stops; most are written before the end.
TEST(AttentionStream, PiecesOfAnySizeWriteTheWholeUtterancesGreedyOutput) {
  ParameterStore store;
  Rng rng(7);
  RnnSeq2Seq model(mocha_config(), Scope(store, rng, "m"));
  int64_t early = 0, written = 0, retaken = 0;
  for (int64_t frames : {5, 40, 97, 300}) {
    std::vector<float> x(static_cast<size_t>(frames * kBins));
    for (float& v : x) v = static_cast<float>(rng.normal());
    const Seq2SeqBatch batch =
        make_audio_batch({std::span<const float>(x)}, kBins, {{}}, AudioFrontEndConfig::kMinFrames);
    const int64_t positions = AudioFrontEndConfig::output_frames(frames);
    const Hypothesis offline =
        greedy_decode(model, batch, std::vector<int64_t>{positions + 10}).front();
    ASSERT_FALSE(offline.tokens.empty()) << frames << " frames";
    for (int trial = 0; trial < 3; ++trial) {
      std::unique_ptr<AttentionStream> s = model.attention_stream(10);
      std::vector<AttentionStream::Token> got;
      int64_t pushes_writing = 0;
      // pieces of 0 .. 20 frames (trial 0: one frame at a time)
      for (int64_t t = 0; t < frames;) {
        const int64_t n = std::min(frames - t, trial == 0 ? 1 : rng.below(21));
        const int64_t heard = s->positions(), stop = got.empty() ? -1 : got.back().stop;
        const std::vector<AttentionStream::Token> y =
            s->push({x.data() + t * kBins, static_cast<size_t>(n * kBins)});
        pushes_writing += y.empty() ? 0 : 1;
        got.insert(got.end(), y.begin(), y.end());
        t += n;
        // the memory holds nothing the attention cannot read again: once more is heard, from
        // the last stop's chunk (w = 2) on
        if (stop >= 0 && s->positions() > heard && got.back().id != Vocab::kEos) {
          EXPECT_LE(s->held(), s->positions() - stop + 1) << t << " frames";
        }
      }
      const size_t before_end = got.size();
      const std::vector<AttentionStream::Token> last = s->finish();
      got.insert(got.end(), last.begin(), last.end());
      got = without_eos(got, positions);
      EXPECT_EQ(s->positions(), positions);
      ASSERT_EQ(got.size(), offline.tokens.size()) << frames << " frames, trial " << trial;
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].id, offline.tokens[i]) << i;
        EXPECT_NEAR(got[i].log_prob, offline.token_log_probs[i], 1e-4) << i;
        EXPECT_EQ(got[i].stop, attended_position(offline.attention[i])) << i;
        EXPECT_LE(got[i].stop, got[i].heard - 1);  // written once its stop was heard
        if (i > 0) {
          EXPECT_GE(got[i].heard, got[i - 1].heard);
        }
      }
      if (trial == 0) {
        early += static_cast<int64_t>(before_end);
        written += static_cast<int64_t>(got.size());
        retaken += pushes_writing > 1;
      }
    }
  }
  // written as the audio came, over many pushes: most before the utterance ended
  EXPECT_GT(early, written / 2) << early << " of " << written;
  EXPECT_GE(retaken, 2);
}

// The listener's states [S, D] of x (a causal encoder: what the stream's listener computes).
std::vector<float> listened(const RnnSeq2Seq& model, const std::vector<float>& x) {
  Graph g(Mode::Inference);
  const Tensor& h = model.start(g, batch_of(x)).attention.memory.annotations.value();
  return {h.data(), h.data() + h.shape().numel()};
}

// What greedy decoding by attention alone writes over the listener's positions [from, to) of
// `states` (D wide), at most `limit` units, then its </s> (as a stream's segment gives it: stops
// from the stream's start; the length limit's </s> at the last position, scored 0).
std::vector<AttentionStream::Token> offline_segment(const RnnSeq2Seq& model,
                                                    const std::vector<float>& states, int64_t D,
                                                    int64_t from, int64_t to, int64_t limit) {
  Graph g(Mode::Inference);
  const auto n = static_cast<int32_t>(to - from);
  RnnSeq2Seq::DecoderState st = model.start(
      g, g.input(Shape{1, n, D}, {states.data() + from * D, static_cast<size_t>(n * D)}), {&n, 1});
  std::vector<AttentionStream::Token> out;
  int32_t prev = Vocab::kBos;
  const int64_t V = model.tgt_vocab();
  for (int64_t i = 0;; ++i) {
    if (i == limit) {
      out.push_back({.id = Vocab::kEos, .stop = to - 1});
      return out;
    }
    const RnnSeq2Seq::Step s = model.step(g, {&prev, 1}, st);
    const float* lp = s.log_probs.value().data();
    const auto best = static_cast<int32_t>(
        Vocab::kEos + std::max_element(lp + Vocab::kEos, lp + V) - (lp + Vocab::kEos));
    const std::span<const float> w(s.weights.value().data(), static_cast<size_t>(n));
    out.push_back({.id = best, .stop = from + attended_position(w), .log_prob = lp[best]});
    if (best == Vocab::kEos) return out;
    prev = best;
    st = s.next;
  }
}

// x streamed in pieces of 1..20 frames, split into its segments (each ending with its </s>)
std::vector<std::vector<AttentionStream::Token>> segments(AttentionStream& s,
                                                          const std::vector<float>& x, Rng& rng) {
  const std::vector<AttentionStream::Token> got = pushed(s, x, kBins, rng, 20);
  std::vector<std::vector<AttentionStream::Token>> out(1);
  for (const AttentionStream::Token& t : got) {
    out.back().push_back(t);
    if (t.id == Vocab::kEos) out.emplace_back();
  }
  EXPECT_TRUE(out.back().empty()) << "the stream's tokens end with a </s>";
  out.pop_back();
  return out;
}

void expect_same(const std::vector<AttentionStream::Token>& got,
                 const std::vector<AttentionStream::Token>& want, const std::string& where) {
  ASSERT_EQ(got.size(), want.size()) << where;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].id, want[i].id) << where << ", unit " << i;
    EXPECT_EQ(got[i].stop, want[i].stop) << where << ", unit " << i;
    EXPECT_NEAR(got[i].log_prob, want[i].log_prob, 1e-4) << where << ", unit " << i;
  }
}

// A MoChA recognizer (random weights, as above) whose output bias for </s> is `eos_bias` (at 0.4
// it writes </s> after a few units now and then, at 0 never before the end), its energy bias r.
std::unique_ptr<RnnSeq2Seq> mocha_model(ParameterStore& store, float eos_bias, float r = 0.f) {
  RnnSeq2SeqConfig c = mocha_config();
  c.monotonic_attention.bias = r;
  Rng rng(7);
  auto model = std::make_unique<RnnSeq2Seq>(c, Scope(store, rng, "m"));
  for (Parameter* p : store.all())
    if (p->name == "m/decoder/out/b") p->value.data()[Vocab::kEos] = eos_bias;
  return model;
}

// Segments: with endpointing on, a decoder that writes </s> before the audio's end is followed
// by a new one on the positions after its stop, the listener going on, each holding only what
// its attention can still read. Each segment writes what greedy decoding of the listener's
// states from its first position to the end writes (ids, stops from the stream's start,
// log-probabilities, </s>).
TEST(AttentionStream, AfterEosANewSegmentDecodesTheRestAsOfflineDecodingWould) {
  ParameterStore store;
  const std::unique_ptr<RnnSeq2Seq> model = mocha_model(store, 0.4f);
  Rng rng(5);
  int64_t segments_seen = 0, units = 0;
  for (int64_t frames : {97, 300, 600}) {
    const std::vector<float> x = random_frames(frames, rng);
    const std::vector<float> states = listened(*model, x);
    const int64_t S = AudioFrontEndConfig::output_frames(frames), D = 16;
    ASSERT_EQ(static_cast<int64_t>(states.size()), S * D);
    const std::unique_ptr<AttentionStream> s = model->attention_stream(10, /*endpoint=*/1000000);
    const auto got = segments(*s, x, rng);
    int64_t from = 0;
    for (size_t k = 0; k < got.size(); ++k) {
      expect_same(got[k], offline_segment(*model, states, D, from, S, S - from + 10),
                  std::to_string(frames) + " frames, segment " + std::to_string(k));
      from = got[k].back().stop + 1;
      units += static_cast<int64_t>(got[k].size()) - 1;
    }
    EXPECT_EQ(from, S) << "the last segment ends with the stream";
    segments_seen += static_cast<int64_t>(got.size());
  }
  EXPECT_GE(segments_seen, 8);
  EXPECT_GE(units, 40);
}

// The endpoint: once `endpoint` positions were heard past a segment's last unit's stop, the
// segment ends there, its waiting step taken to be its </s>: its units are the first ones greedy
// decoding of the listener's states from its first position writes, and the next one that
// decoding writes stops on the segment's last position or later (it had not been heard), unless
// the length limit held it back (a unit per position heard and 10 more: random weights write
// faster than their stops move). The segment that ends with the stream: all of them. The
// segments are the same however the audio is cut (the endpoint is looked at a position at a time).
TEST(AttentionStream, AnEndpointEndsTheSegmentWhereTheAttentionWaits) {
  ParameterStore store;
  // r = -0.02: its decoder writes a few units, then its attention stops nowhere for long
  const std::unique_ptr<RnnSeq2Seq> model = mocha_model(store, 0.f, -0.02f);
  Rng rng(6);
  int64_t endpointed = 0, waited = 0;
  for (int64_t frames : {300, 600}) {
    const std::vector<float> x = random_frames(frames, rng);
    const std::vector<float> states = listened(*model, x);
    const int64_t S = AudioFrontEndConfig::output_frames(frames), D = 16, endpoint = 3;
    const std::unique_ptr<AttentionStream> s = model->attention_stream(10, endpoint);
    const auto got = segments(*s, x, rng);
    // the same segments however the audio is cut: here in one piece
    const std::unique_ptr<AttentionStream> whole = model->attention_stream(10, endpoint);
    const std::vector<AttentionStream::Token> at_once = pushed(*whole, x, kBins, rng, 0);
    size_t i = 0;
    for (const auto& segment : got)
      for (const AttentionStream::Token& t : segment) {
        ASSERT_LT(i, at_once.size());
        EXPECT_EQ(at_once[i].id, t.id) << i;
        EXPECT_EQ(at_once[i++].stop, t.stop) << i;
      }
    EXPECT_EQ(i, at_once.size());
    int64_t from = 0;
    for (size_t k = 0; k < got.size(); ++k) {
      const std::string where = std::to_string(frames) + " frames, segment " + std::to_string(k);
      const int64_t to = got[k].back().stop + 1;
      const auto want = offline_segment(*model, states, D, from, S, S - from + 10);
      if (to == S && got[k].size() == want.size()) {  // ended with the stream, not before
        expect_same(got[k], want, where);
        from = to;
        continue;
      }
      const size_t n = got[k].size() - 1;  // units
      ASSERT_GE(n, 1u) << where;
      ASSERT_GT(want.size(), n) << where;
      expect_same({got[k].begin(), got[k].end() - 1}, {want.begin(), want.begin() + n}, where);
      EXPECT_GE(to - 1 - got[k][n - 1].stop, endpoint) << where;  // heard past the last stop
      EXPECT_EQ(got[k].back().log_prob, 0.f) << where;
      if (static_cast<int64_t>(n) < to - from + 10) {  // the attention waited, not the limit
        EXPECT_GE(want[n].stop, to - 1) << where;      // (MoChA's chunk: w - 1 = 1 back)
        ++waited;
      }
      ++endpointed;
      from = to;
    }
    EXPECT_EQ(from, S);
  }
  EXPECT_GE(endpointed, 4);
  EXPECT_GE(waited, 2);
}

// A 10-minute stream costs per second of audio what a 30-second one does (thread CPU time on
// one thread, within 1.5x) and holds a few positions: here the attention stops nowhere (r = -1:
// random weights' energies are near 0, so p_ij is near 0.27 everywhere) and its first step runs
// off whatever is heard, as over a long silence. Each position's keys are made once, the step
// taken again scans from where it ran off, and what it scanned is let go.
TEST(AttentionStream, LongStreamsCostPerSecondWhatShortOnesDoAndHoldLittle) {
  const testing::OneThread one_thread;  // (support/thread_cpu.h says why)
  RnnSeq2SeqConfig c = mocha_config();
  c.monotonic_attention.bias = -1.f;
  ParameterStore store;
  Rng init(7);
  const RnnSeq2Seq model(c, Scope(store, init, "m"));
  Rng rng(8);
  const std::vector<float> x = random_frames(60000, rng);  // 10 minutes of 10 ms frames
  auto run = [&](int64_t frames, int64_t& held) {
    const std::unique_ptr<AttentionStream> s = model.attention_stream(10);
    held = 0;
    int64_t written = 0;
    const double t0 = testing::thread_cpu_seconds();
    for (int64_t t = 0; t < frames; t += 16) {
      const int64_t n = std::min<int64_t>(16, frames - t);
      written += static_cast<int64_t>(
          s->push({x.data() + t * kBins, static_cast<size_t>(n * kBins)}).size());
      held = std::max(held, s->held());
    }
    const double seconds = testing::thread_cpu_seconds() - t0;
    EXPECT_EQ(written, 0) << "it stopped somewhere";
    return seconds / static_cast<double>(frames);
  };
  int64_t held_short = 0, held_long = 0;
  double short_cost = 1e9;
  for (int k = 0; k < 3; ++k) short_cost = std::min(short_cost, run(3000, held_short));
  const double long_cost = run(60000, held_long);
  EXPECT_LT(long_cost, 1.5 * short_cost) << long_cost << " against " << short_cost;
  EXPECT_LE(held_long, 6) << "positions held (40 ms each): a push's 4 and the chunk's 1";
}

// Joint CTC-MoChA (a CTC head beside the attention, --ctc-lookahead D): the stream writes what
// offline greedy joint decoding with the same D writes (ids, joint scores), each token once its
// stop and D positions after it are heard; with D past every utterance's end the offline joint
// decoding is the whole-utterance one (D = -1) exactly; and CTC changes what is written.
TEST(AttentionStream, JointCtcMochaStreamsWhatOfflineJointDecodingWrites) {
  Rng rng(9);
  int64_t changed = 0, early = 0, written = 0;
  for (int64_t lookahead : {0, 3}) {
    RnnSeq2SeqConfig c = mocha_config();
    c.ctc_weight = 0.5f;
    c.ctc_decode_lookahead = lookahead;
    ParameterStore store;
    Rng init(11);
    RnnSeq2Seq model(c, Scope(store, init, "m"));
    auto offline = [&](int64_t d, float lambda, const Seq2SeqBatch& batch, int64_t positions) {
      RnnSeq2SeqConfig o = c;
      o.ctc_decode_lookahead = d;
      o.ctc_decode_weight = lambda;
      ParameterStore s2;
      Rng i2(11);
      RnnSeq2Seq m(o, Scope(s2, i2, "m"));
      return greedy_decode(m, batch, std::vector<int64_t>{positions + 10}).front();
    };
    for (int64_t frames : {40, 97, 300}) {
      const std::vector<float> x = random_frames(frames, rng);
      const Seq2SeqBatch batch = batch_of(x);
      const int64_t positions = AudioFrontEndConfig::output_frames(frames);
      const Hypothesis want = offline(lookahead, -1.f, batch, positions);
      ASSERT_FALSE(want.tokens.empty());
      if (lookahead == 3) {  // a lookahead past the end: the whole-utterance joint decoding
        const Hypothesis far = offline(positions, -1.f, batch, positions);
        const Hypothesis whole = offline(-1, -1.f, batch, positions);
        EXPECT_EQ(far.tokens, whole.tokens);
        EXPECT_EQ(far.token_log_probs, whole.token_log_probs);
      }
      changed += offline(lookahead, 0.f, batch, positions).tokens != want.tokens;
      const std::vector<AttentionStream::Token> got = streamed(model, x, rng, early);
      written += static_cast<int64_t>(got.size());
      ASSERT_EQ(got.size(), want.tokens.size()) << frames << " frames, D " << lookahead;
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].id, want.tokens[i]) << i;
        EXPECT_NEAR(got[i].log_prob, want.token_log_probs[i], 1e-4) << i;
        // written once its stop and the lookahead after it were heard
        const std::vector<float>& row = want.attention[i];
        int64_t stop = static_cast<int64_t>(row.size()) - 1;
        while (stop >= 0 && row[static_cast<size_t>(stop)] == 0.f) --stop;
        if (got[i].heard < positions) {
          EXPECT_GE(got[i].heard, stop + 1 + lookahead) << i;
        }
      }
    }
  }
  EXPECT_GE(changed, 1);                                        // CTC's scores change some output
  EXPECT_GT(early, written / 3) << early << " of " << written;  // most before the end
}

// Wait-k on audio (bahdanau attention, k = 2 chunks of 3 positions): the stream writes what
// offline greedy decoding writes, output i once (i + 2) x 3 positions are heard (or the end),
// and then at once (random weights write more outputs than chunks: the rest at the end).
TEST(AttentionStream, WaitKOnChunksOfAudioStreamsWhatOfflineDecodingWrites) {
  RnnSeq2SeqConfig c = mocha_config();
  c.attention = AttentionKind::Bahdanau;
  c.wait_k = 2;
  c.wait_k_chunk = 3;
  ParameterStore store;
  Rng rng(12);
  RnnSeq2Seq model(c, Scope(store, rng, "m"));
  for (Parameter* p : store.all())  // random weights write </s> at once: pushed down, to write
    if (p->name == "m/decoder/out/b") p->value.data()[Vocab::kEos] = -4.f;
  int64_t early = 0, written = 0, utterances = 0, due = 0;
  for (int64_t frames : {40, 97, 150, 200, 300}) {
    const std::vector<float> x = random_frames(frames, rng);
    const int64_t positions = AudioFrontEndConfig::output_frames(frames);
    const Hypothesis want =
        greedy_decode(model, batch_of(x), std::vector<int64_t>{positions + 10}).front();
    utterances += want.tokens.empty() ? 0 : 1;  // (random weights: some write </s> at once)
    const std::vector<AttentionStream::Token> got = streamed(model, x, rng, early);
    written += static_cast<int64_t>(got.size());
    ASSERT_EQ(got.size(), want.tokens.size()) << frames << " frames";
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].id, want.tokens[i]) << i;
      EXPECT_NEAR(got[i].log_prob, want.token_log_probs[i], 1e-4) << i;
      // its attention over the chunks read, nothing past them
      const std::vector<float>& row = want.attention[i];
      const auto read = static_cast<int64_t>((i + 2) * 3);
      for (int64_t j = read; j < static_cast<int64_t>(row.size()); ++j)
        EXPECT_EQ(row[static_cast<size_t>(j)], 0.f) << i << " " << j;
      if (got[i].heard < positions) {
        EXPECT_GE(got[i].heard, read) << i;
      }
      // and written as soon as they were heard: those read well before the end, before it
      if (read + 8 <= positions) {
        EXPECT_LT(got[i].heard, positions) << i;
        ++due;
      }
    }
  }
  EXPECT_GE(utterances, 3);
  EXPECT_GT(due, 30);
  EXPECT_GT(early, due) << early << " of " << written;
}

class AttentionStreamTest : public ::testing::Test {
 protected:
  // Tone-task recognizers (tests/support/tones.h), a few steps each: a MoChA one over a causal
  // listener, and two that cannot stream.
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir;
    make_set(*dir_, "train", 40, 1);
    make_set(*dir_, "dev", 4, 2);
    for (const char* name : {"mocha", "bahdanau", "bidirectional"}) {
      TrainOptions o = tone_options(*dir_, name, 4);
      o.model = "rnn";
      o.shape.attention =
          std::string(name) == "bahdanau" ? AttentionKind::Bahdanau : AttentionKind::Mocha;
      o.shape.direction =
          std::string(name) == "bidirectional" ? EncoderDirection::Both : EncoderDirection::Forward;
      o.shape.hidden = 16;
      o.shape.embed = 16;
      o.shape.attn_dim = 8;
      o.shape.tgt_embed = 8;
      o.shape.dec_hidden = 16;
      std::ostringstream log;
      train(o, log);
    }
    // the MoChA one with its energy bias r set to 1: after so few steps its decoder runs off
    // the audio at once; now p_ij is near sigmoid(1) and its stops fall over the utterance
    testing::copy_changed(
        *dir_ / "mocha", *dir_ / "mocha-stops",
        [](const std::string& name, float v) { return name.ends_with("/r") ? 1.f : v; });
  }
  static void TearDownTestSuite() { delete dir_; }
  static testing::TempDir* dir_;
};
testing::TempDir* AttentionStreamTest::dir_ = nullptr;

TEST_F(AttentionStreamTest, ModelsThatCannotStreamAreRefusedNamingWhy) {
  auto refused = [](const std::string& dir, const StreamOptions& o, const std::string& why) {
    const Recognizer rec(dir);
    try {
      RecognizerStream s(rec, o, [] { return 0.0; });
      ADD_FAILURE() << dir << ": streams";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused(*dir_ / "bahdanau", {}, "--attention monotonic or mocha");
  refused(*dir_ / "bidirectional", {}, "--unidirectional");
  refused(*dir_ / "mocha", {.beam = 2}, "greedily (--beam 1)");
  // joint CTC-MoChA needs a CTC head and stops
  for (const char* name : {"mocha", "bahdanau"}) {
    try {
      const Recognizer rec(*dir_ / name, {.ctc_lookahead = 2});
      ADD_FAILURE() << name << ": --ctc-lookahead taken";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--ctc-lookahead needs a joint"), std::string::npos)
          << e.what();
    }
  }
}

// What the page draws of an attention recognizer's stream (a StreamView; POST /stream with
// view=1): every filterbank frame once, those of the whole utterance; the positions the listener
// computed, and no CTC scores; each unit written, in the final's order, at the stop where the
// offline decoder's attention weighs most, given out once that stop was heard.
TEST_F(AttentionStreamTest, AViewShowsEachUnitAtItsStopOnceHeard) {
  const Recognizer rec(*dir_ / "mocha-stops");
  const auto [refs, audio] = tone_words(3, 9);
  const auto whole = rec.transcribe({audio.begin(), audio.end()}, {.alignment = true});
  size_t written = 0, early = 0;
  for (size_t i = 0; i < audio.size(); ++i) {
    const Transcript& t = whole[i].at(0);
    written += t.units.size();
    for (size_t piece : {160, 2731}) {
      const testing::ViewedStream v = testing::stream_viewed(rec, audio[i], piece);
      EXPECT_EQ(v.view.frames, rec.features(audio[i]));
      EXPECT_EQ(v.view.positions, v.positions);
      EXPECT_TRUE(v.view.scores.empty());
      EXPECT_EQ(v.results.back().text, t.text);
      ASSERT_EQ(v.view.tokens.size(), t.units.size()) << "piece " << piece;
      for (size_t k = 0; k < t.units.size(); ++k) {
        const AttentionStream::Token& u = v.view.tokens[k];
        EXPECT_EQ(rec.files().tgt_vocab.token(u.id), t.units[k]) << k;
        EXPECT_EQ(u.stop, attended_position(t.alignment[k])) << k;
        EXPECT_LT(u.stop, v.by[k]) << k;  // shown once heard
        early += v.by[k] < v.positions;
      }
    }
  }
  EXPECT_GT(written, 6u);
  EXPECT_GT(early, written);  // of the 2 x written shown, most before the end
}

// A recognizer's stream with an endpoint (RecognizerStream, --endpoint-ms): each segment of its
// attention stream that wrote a word is a final, in order, numbered on, spanning the segment's
// positions (40 ms each, the next one starting where it ended), its text the segment's units and
// each word timed by their stops; a segment of word boundaries alone (a pause) is no final.
TEST_F(AttentionStreamTest, EachSegmentWithWordsIsAFinalOverItsPositions) {
  const Recognizer rec(*dir_ / "mocha-stops");
  const ModelFiles& m = rec.files();
  const auto [words, spoken] = tone_words(4, 12);
  std::mt19937 rng(3);
  std::normal_distribution<float> quiet(0.f, 0.01f);
  std::vector<float> audio;
  for (const std::vector<float>& w : spoken) {
    audio.insert(audio.end(), w.begin(), w.end());
    for (int k = 0; k < kRate * 3 / 4; ++k) audio.push_back(quiet(rng));
  }
  const double endpoint = 0.12;  // 3 positions
  // what the model's attention stream writes over the same frames
  const std::unique_ptr<AttentionStream> direct =
      m.model->attention_stream(Recognizer::kExtraUnits, 3);
  Rng one_piece(0);
  const std::vector<AttentionStream::Token> tokens =
      pushed(*direct, rec.features(audio), rec.bins(), one_piece, 0);
  struct Segment {
    std::string text;
    int64_t start, end;
    std::vector<int64_t> stops;
  };
  std::vector<Segment> want;
  std::vector<int32_t> units;
  std::vector<int64_t> stops;
  int64_t start = 0, blank = 0;
  for (const AttentionStream::Token& t : tokens) {
    if (t.id != Vocab::kEos) {
      units.push_back(t.id);
      stops.push_back(t.stop);
      continue;
    }
    const std::string text = m.tgt_seg.join(m.tgt_vocab.decode(units));
    if (text.find_first_not_of(' ') != std::string::npos)
      want.push_back({text, start, t.stop + 1, stops});
    else
      ++blank;
    units.clear();
    stops.clear();
    start = t.stop + 1;
  }
  ASSERT_GE(want.size(), 2u) << "segments with words";
  // the recognizer's stream, in 100 ms pieces
  RecognizerStream s(rec, {.endpoint_seconds = endpoint}, [] { return 0.0; });
  std::vector<StreamResult> finals;
  auto keep = [&](const std::vector<StreamResult>& results) {
    for (const StreamResult& r : results)
      if (r.final) finals.push_back(r);
  };
  for (size_t i = 0; i < audio.size(); i += 1600)
    keep(
        s.push(std::span<const float>(audio).subspan(i, std::min<size_t>(1600, audio.size() - i))));
  keep(s.finish());
  ASSERT_EQ(finals.size(), want.size()) << blank << " segments of word boundaries alone";
  for (size_t k = 0; k < finals.size(); ++k) {
    EXPECT_EQ(finals[k].segment, static_cast<int64_t>(k));
    EXPECT_EQ(finals[k].text, want[k].text) << k;
    EXPECT_NEAR(finals[k].start, static_cast<double>(want[k].start) * 0.04, 1e-9) << k;
    EXPECT_NEAR(finals[k].end, static_cast<double>(want[k].end) * 0.04, 1e-9) << k;
    for (const WordTime& w : finals[k].words) {  // timed by the stops, inside the segment
      EXPECT_GE(w.start, finals[k].start) << k;
      EXPECT_LE(w.end, finals[k].end) << k;
      EXPECT_NE(std::find_if(want[k].stops.begin(), want[k].stops.end(),
                             [&](int64_t stop) {
                               return std::abs(static_cast<double>(stop) * 0.04 - w.start) < 1e-9;
                             }),
                want[k].stops.end())
          << k << ": " << w.word << " starts at no stop";
    }
  }
}

// A step's position: its largest weight's; a step that ran off the end (no weight): the last.
TEST(AttentionStream, AttendedPositionIsTheLargestWeightsOrTheLastWhenNone) {
  EXPECT_EQ(attended_position(std::vector<float>{0.f, 0.2f, 0.7f, 0.1f}), 2);
  EXPECT_EQ(attended_position(std::vector<float>{0.f, 0.f, 0.f}), 2);
  EXPECT_EQ(attended_position(std::vector<float>{1.f}), 0);
}

// --latency-weight on a recognizer: the delay is counted in the listener's 40 ms positions (a
// quarter of the frames), not in frames. Stops that never come (r = -60) read every position:
// the term is lambda sum_b |y_b| S'_b / sum_b |y_b|, S'_b the utterance's positions.
TEST(AttentionStream, LatencyTermCountsTheListenersPositions) {
  RnnSeq2SeqConfig c = mocha_config();
  c.monotonic_attention.noise = 0.f;
  c.monotonic_attention.bias = -60.f;
  Rng data(3);
  std::vector<std::vector<float>> utts;
  for (int64_t frames : {61, 97}) {
    utts.emplace_back(static_cast<size_t>(frames * kBins));
    for (float& v : utts.back()) v = static_cast<float>(data.normal());
  }
  const Seq2SeqBatch batch =
      make_audio_batch({utts.begin(), utts.end()}, kBins,
                       {{Vocab::kSpecials, Vocab::kSpecials + 1}, {Vocab::kSpecials + 2}},
                       AudioFrontEndConfig::kMinFrames);
  const std::vector<int32_t> tgt_len = target_lengths(batch);
  double read = 0, outputs = 0;
  for (size_t b = 0; b < utts.size(); ++b) {
    const int64_t positions =
        AudioFrontEndConfig::output_frames(static_cast<int64_t>(utts[b].size()) / kBins);
    read += static_cast<double>(tgt_len[b] * positions);
    outputs += tgt_len[b];
  }
  const auto loss = [&](float lambda) {
    c.latency.weight = lambda;
    ParameterStore store;
    Rng rng(8);
    RnnSeq2Seq model(c, Scope(store, rng, "m"));
    Graph g(Mode::Train);
    return double{model.loss(g, batch, 0.f).value().data()[0]};
  };
  EXPECT_NEAR(loss(0.5f) - loss(0.f), 0.5 * read / outputs, 1e-3);
}

}  // namespace
}  // namespace heed
