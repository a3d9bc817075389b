// `heed transcribe --online`: streaming recognition (decode/recognizer_stream.h). The audio of
// stdin (WAV or raw PCM, read as it arrives) or of each input (read whole, then given in
// --chunk-ms pieces, at the pace of its audio with --realtime) goes to a RecognizerStream; every
// result is one JSON line the moment it is known:
//   {"id", "type": "partial", "segment", "text", "stable", "audio", "emitted"}
//   {"id", "type": "final", "segment", "text", "start", "end", "log_prob",
//    "words": [{"word", "start", "end", "emitted", "read"}], "audio", "emitted"}
// "audio" is the audio read so far and "emitted" the moment the line (a word: its last unit) was
// given out, in seconds since the stream began: the wall clock for stdin and --realtime; as
// fast as decoding goes, the chunk's end in the audio plus the time spent on it since it came.
// A word's "read" is the audio read when it was given out (what AL counts).
// Leaves out: the search (decode/), reading audio (io/).
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "heed/data/speech_features.h"
#include "heed/decode/recognizer_stream.h"
#include "heed/io/audio.h"
#include "heed/util/error.h"

namespace heed::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void print(const std::string& id, const StreamResult& r, double emitted) {
  nlohmann::json j = to_json(r);
  j["id"] = id;
  j["emitted"] = emitted;
  std::cout << j.dump() << std::endl;  // flushed: a reader downstream sees it now
  check_stdout();
}

}  // namespace

int TranscribeCommand::run_online(Recognizer& recognizer,
                                  const std::vector<Utterance>& utts) const {
  const StreamOptions so{.beam = options.beam,
                         .lm_weight = options.lm_weight,
                         .lm_bonus = options.lm_bonus,
                         .endpoint_seconds = endpoint_ms / 1000.0,
                         .partials = partial};
  const double chunk = chunk_ms / 1000.0;
  double audio_total = 0, compute = 0;  // for the real-time factor
  // stdin: read as it arrives, on the wall clock
  if (utts.empty()) {
    const Clock::time_point t0 = Clock::now();
    RecognizerStream stream(recognizer, so, [&] { return seconds_since(t0); });
    AudioStreamReader in(
        STDIN_FILENO, "<stdin>",
        {.format = input_format, .sample_rate = sample_rate, .channels = channels});
    for (;;) {
      const std::vector<float> samples = in.read(chunk);
      const Clock::time_point c0 = Clock::now();
      const std::vector<StreamResult> out =
          samples.empty() && in.ended() ? stream.finish() : stream.push(samples);
      compute += seconds_since(c0);
      for (const StreamResult& r : out) print("-", r, seconds_since(t0));
      if (samples.empty() && in.ended()) break;
    }
    audio_total = stream.audio_seconds();
  }
  std::string last_path;
  Audio audio;
  for (const Utterance& u : utts) {
    if (u.path != last_path) {
      audio = read_audio(u.path, {.max_seconds = max_seconds});
      last_path = u.path;
    }
    const std::span<const float> x = utterance_samples(audio, u);
    const auto step = static_cast<size_t>(chunk * Recognizer::kSampleRate);
    const Clock::time_point t0 = Clock::now();
    Clock::time_point c0 = t0;
    double chunk_end = 0;  // the audio given so far, in seconds
    // realtime: the wall clock; otherwise the chunk's end plus the time spent since it came
    auto now = [&] { return realtime ? seconds_since(t0) : chunk_end + seconds_since(c0); };
    RecognizerStream stream(recognizer, so, now);
    for (size_t i = 0; i <= x.size(); i += step) {
      const size_t n = std::min(step, x.size() - std::min(i, x.size()));
      chunk_end = static_cast<double>(i + n) / Recognizer::kSampleRate;
      if (realtime)  // the chunk is whole when its last sample has been spoken
        std::this_thread::sleep_until(t0 + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double>(chunk_end)));
      c0 = Clock::now();
      const bool last = i + step > x.size();
      std::vector<StreamResult> out = stream.push(x.subspan(i, n));
      if (last) {
        std::vector<StreamResult> end = stream.finish();
        out.insert(out.end(), end.begin(), end.end());
      }
      compute += seconds_since(c0);
      for (const StreamResult& r : out) print(u.id, r, now());
      if (last) break;
    }
    audio_total += stream.audio_seconds();
  }
  std::cerr << "heed transcribe --online: " << audio_total << " s of audio, decoding " << compute
            << " s, real-time factor " << (audio_total > 0 ? compute / audio_total : 0.0) << "\n";
  return 0;
}

}  // namespace heed::cli
