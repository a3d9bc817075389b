// `heed transcribe`: audio to text with a trained speech recognizer (decode/recognizer.h).
// Inputs: audio files, manifests ("path<TAB>transcript") or Kaldi data directories as
// arguments, or lines on stdin (each an audio path, a wav.scp line "ID PATH" or a manifest
// line). One transcript per utterance and line, in input order; with --timestamps or
// --n-best > 1 one JSON line each.
// Leaves out: the search (decode/), reading audio (io/audio.h).
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "heed/data/corpus.h"
#include "heed/data/speech_corpus.h"
#include "heed/data/speech_features.h"
#include "heed/data/text.h"
#include "heed/decode/recognizer.h"
#include "heed/util/error.h"

namespace fs = std::filesystem;

namespace heed::cli {

void TranscribeCommand::add(CLI::App& parent, int& threads) {
  app = parent.add_subcommand(
      "transcribe",
      "Transcribe audio (WAV, FLAC, OGG/Vorbis...; any rate, resampled to 16 kHz mono) with a "
      "speech recognizer trained by heed train --format audio");
  app->add_option("--model", model, "The recognizer's directory (heed train --save)")->required();
  app->add_option("inputs", inputs,
                  "Audio files, manifests (path<TAB>transcript) or Kaldi data directories "
                  "(wav.scp, text, optional segments); none: read lines from stdin (an audio "
                  "path, \"ID PATH\" as in wav.scp, or a manifest line)");
  app->add_option("--beam", options.beam,
                  "1: the best path (greedy); more: CTC prefix beam search of this width")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  app->add_option("--n-best", options.n_best, "Transcripts per utterance (JSON lines; <= --beam)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  app->add_option("--lm", lm,
                  "An ARPA n-gram model of the output units (heed lm --format audio over the "
                  "training manifest) in the beam search: score = log p_ctc + --lm-weight x ln "
                  "p_lm + --lm-bonus x length");
  app->add_option("--lm-weight", options.lm_weight, "With --lm: the LM's weight")
      ->capture_default_str()
      ->check(kNonNegative);
  app->add_option("--lm-bonus", options.lm_bonus, "With --lm: added per output unit")
      ->capture_default_str()
      ->check(kFinite);
  app->add_option("--ctc-weight", overrides.ctc_weight,
                  "A joint CTC-attention model (trained with --ctc-weight): decode with CTC's "
                  "prefix scores at this weight lambda (0: attention alone; default: as trained)")
      ->check(CLI::Range(0.0, 1.0));
  app->add_option("--ctc-lookahead", overrides.ctc_lookahead,
                  "Joint CTC-MoChA (a model trained with --ctc-weight and --attention monotonic or "
                  "mocha): CTC's prefix scores read the audio only up to this many positions (40 "
                  "ms each) past each output's attention stop, not the whole utterance, so that "
                  "the joint decoding streams (--online: unset, attention alone); the offline "
                  "transcript with the same flag is the streamed one")
      ->check(CLI::Range(0, 1000));
  app->add_option("--wait-k", overrides.wait_k,
                  "A wait-k speech model (trained with --wait-k, its source read in chunks of "
                  "--wait-k-chunk positions): decode at this k instead of its own, offline and "
                  "--online (one trained with --wait-k-sample serves any k); 0: the model's")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  app->add_flag("--timestamps", options.timestamps,
                "JSON lines with each word's start and end in seconds (from the most probable "
                "alignment; 40 ms steps)");
  add_enum_option(*app, "--compute-type", compute_type,
                  "Weights for decoding: int8 quantizes the weight matrices per row at load time "
                  "(faster, especially at batch 1; slightly different scores)");
  app->add_option("--batch", options.batch, "Utterances decoded together")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  app->add_option("--max-audio-seconds", max_seconds, "A longer recording is refused")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1e6));
  app->add_flag("--online", online,
                "Streaming recognition: the audio is read and decoded as it arrives (stdin, or "
                "each input in --chunk-ms pieces), with JSON lines out: each segment's final "
                "result with its words' times and the moment each was given out (\"emitted\"), "
                "and with --partial the partial results. Needs a causal recognizer: --model ctc "
                "--unidirectional, or --model rnn --attention monotonic|mocha --unidirectional "
                "(greedy; by attention alone, or joint with CTC given --ctc-lookahead), or --model "
                "rnn --wait-k K --unidirectional (output i once "
                "i + K chunks are heard)");
  add_enum_option(*app, "--input-format", input_format,
                  "--online from stdin: wav (a WAV header, then 16-bit PCM or 32-bit float; any "
                  "rate and channels) or raw (16-bit little-endian PCM at --sample-rate)");
  app->add_option("--sample-rate", sample_rate, "--online, raw stdin: its rate in Hz")
      ->capture_default_str()
      ->check(CLI::Range(1000, 768000));
  app->add_option("--channels", channels, "--online, raw stdin: interleaved channels (averaged)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app->add_option("--chunk-ms", chunk_ms,
                  "--online: audio read and decoded per step, in milliseconds (a word waits up "
                  "to this long for its chunk to end)")
      ->capture_default_str()
      ->check(CLI::Range(10.0, 10000.0));
  app->add_flag("--realtime", realtime,
                "--online with files: give each chunk when its audio would have been spoken "
                "(wall-clock pace), as a live source does; otherwise as fast as decoding goes, "
                "\"emitted\" then being the chunk's end in the audio plus the time spent on it");
  app->add_flag("--partial", partial,
                "--online: also a partial result whenever the best transcript so far changes "
                "(\"text\", and its \"stable\" beginning that no later audio changes)");
  app->add_option("--endpoint-ms", endpoint_ms,
                  "--online: end a segment (a final result; the search starts again) once the "
                  "recognizer has heard only blanks for this long after a word (0: one segment "
                  "per input). An attention recognizer: once it has heard this long past its "
                  "last unit's stop, or when it writes </s> before the audio "
                  "ends (a new decoder then starts after it: a long stream of many utterances)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 600000.0));
  app->add_option("--threads", threads, "Threads (0 = all cores; --online: 1 unless given)");
  app->footer(
      "The transcripts are lower case a-z, apostrophe and space, as the recognizer was "
      "trained (heed score --metric wer --normalise compares them with raw references).");
}

namespace {

// The utterances of one argument or stdin line.
void add_input(const std::string& arg, const std::string& where, std::vector<Utterance>& out) {
  // an audio file by its name; a directory (Kaldi's) or a manifest by what it holds
  if (!has_audio_extension(arg) &&
      (fs::is_directory(arg) ||
       (fs::is_regular_file(arg) && detect_format(arg) == CorpusFormat::Audio))) {
    const SpeechCorpus c = read_speech_corpus(arg);
    out.insert(out.end(), c.utterances.begin(), c.utterances.end());
    return;
  }
  out.push_back({.id = arg, .path = arg, .text = "", .where = where});
}

}  // namespace

int TranscribeCommand::run() const {
  check(!online || options.n_best == 1, "--online gives one transcript per segment (--n-best 1)");
  warn_if_int8_inexact("heed transcribe", compute_type);
  Recognizer recognizer(model, overrides, compute_type);
  if (!lm.empty()) recognizer.load_lm(lm);
  check(options.n_best <= options.beam, "--n-best ", options.n_best, " needs --beam of at least ",
        options.n_best);
  std::vector<Utterance> utts;
  if (online) {
    if (!(inputs.empty() || (inputs.size() == 1 && inputs[0] == "-")))
      for (const std::string& in : inputs) add_input(in, in, utts);
    return run_online(recognizer, utts);
  }
  if (inputs.empty()) {
    std::string line;
    int64_t n = 0;
    while (std::getline(std::cin, line)) {
      ++n;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = "<stdin>:" + std::to_string(n);
      std::string path = line;
      if (const size_t tab = line.find('\t'); tab != std::string::npos) {
        path = line.substr(0, tab);  // a manifest line
      } else if (const size_t sp = line.find(' '); sp != std::string::npos && !fs::exists(line)) {
        path = line.substr(sp + 1);  // "ID PATH"
        check(path.find('|') == std::string::npos, where,
              ": a wav.scp command (pipe) is not read; give the file");
      }
      utts.push_back({.id = std::to_string(n), .path = path, .text = "", .where = where});
    }
  } else {
    for (const std::string& in : inputs) add_input(in, in, utts);
  }
  const bool json = options.timestamps || options.n_best > 1;
  // in windows of utterances: the features of a window, then its transcripts, in input order
  const size_t window = 64 * static_cast<size_t>(options.batch);
  std::string last_path;
  Audio audio;
  for (size_t w0 = 0; w0 < utts.size(); w0 += window) {
    const size_t w1 = std::min(utts.size(), w0 + window);
    std::vector<std::vector<float>> samples;
    for (size_t i = w0; i < w1; ++i) {
      const Utterance& u = utts[i];
      if (u.path != last_path) {
        audio = read_audio(u.path, {.max_seconds = max_seconds});
        last_path = u.path;
      }
      std::span<const float> x = utterance_samples(audio, u);
      samples.emplace_back(x.begin(), x.end());
    }
    const auto out = recognizer.transcribe({samples.begin(), samples.end()}, options);
    for (size_t k = 0; k < out.size(); ++k) {
      if (!json) {
        std::cout << out[k].front().text << "\n";
        continue;
      }
      nlohmann::json j = {{"id", utts[w0 + k].id}};
      j.update(to_json(out[k], options.timestamps));
      std::cout << j.dump() << "\n";
    }
    check_stdout();
  }
  return 0;
}

}  // namespace heed::cli
