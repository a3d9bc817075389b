// `heed features`: audio files to Kaldi's log-mel filterbanks, as float32 [frames, bins] .npy
// files (one per input, named after it in --out's directory; or one input to --out FILE.npy).
// Leaves out: reading audio (io/audio.h), the filterbank (data/fbank.h).
#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>

#include "commands.h"
#include "heed/data/fbank.h"
#include "heed/data/speech_corpus.h"
#include "heed/data/speech_features.h"
#include "heed/io/audio.h"
#include "heed/io/files.h"
#include "heed/io/npy.h"
#include "heed/util/error.h"

namespace fs = std::filesystem;

namespace heed::cli {

void FeaturesCommand::add(CLI::App& parent) {
  app = parent.add_subcommand(
      "features",
      "Audio (WAV, FLAC, OGG/Vorbis...; any rate and channels, resampled to 16 kHz mono) to "
      "Kaldi's log-mel filterbank features, float32 [frames, bins] .npy files");
  auto* files = app->add_option("inputs", inputs, "Audio files");
  app->add_option("--data", data,
                  "Instead of files: a Kaldi data directory (wav.scp, text, optional segments) "
                  "or a manifest of \"path<TAB>transcript\" lines; each utterance's features "
                  "as --out/ID.npy, and --out/index.tsv listing id, .npy, frames and transcript")
      ->excludes(files);
  app->add_option("--out", out,
                  "A directory (created; each input's features as NAME.npy) or, for one input, "
                  "a .npy file")
      ->required();
  app->add_option("--num-mel-bins", bins, "Mel filters (Kaldi's --num-mel-bins)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  add_enum_option(*app, "--precision", precision,
                  "The arithmetic of the window, FFT and filters: float32 (Kaldi's and "
                  "torchaudio's default; up to ~2e-3 from float64 in bins 60-80 dB under their "
                  "frame's peak) or float64 (within ~2e-4 of torchaudio's float64, ~2x slower)");
  app->add_option("--max-audio-seconds", max_seconds, "Longer files are refused")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1e6));
  app->footer(
      "Kaldi's compute-fbank-feats with its defaults and dither off (torchaudio.compliance."
      "kaldi.fbank): 25 ms Povey windows every 10 ms, whole frames only, DC offset removed, "
      "pre-emphasis 0.97, 512-point power spectrum, triangular mel filters from 20 Hz to "
      "Nyquist, natural log; the samples on the 16-bit scale.");
}

namespace {

// The features of `samples` as a [frames, bins] .npy file; the frames.
int64_t write_features(const Fbank& fbank, std::span<const float> samples,
                       const std::string& path) {
  const std::vector<float> f = fbank.compute(samples);
  const int64_t frames = static_cast<int64_t>(f.size()) / fbank.bins();
  write_npy(path, f, {frames, fbank.bins()});
  return frames;
}

// The utterances of a Kaldi directory or manifest: each one's stretch of its recording (the
// recording read once for its consecutive utterances), its features in DIR/ID.npy, and an index.
int features_of_corpus(const std::string& data, const std::string& out, const Fbank& fbank,
                       double max_seconds) {
  const SpeechCorpus corpus = read_speech_corpus(data);
  check(fs::path(out).extension() != ".npy", "features: --data writes a directory, not ", out);
  fs::create_directories(out);
  std::string index, last_path;
  Audio audio;
  for (const Utterance& u : corpus.utterances) {
    check(!u.id.empty() && u.id.find('/') == std::string::npos && u.id != "." && u.id != "..",
          u.where, ": utterance id '", u.id, "' cannot name a file");
    if (u.path != last_path) {
      audio = read_kaldi_scaled(u.path, max_seconds);
      last_path = u.path;
    }
    const std::string path = (fs::path(out) / (u.id + ".npy")).string();
    const int64_t frames = write_features(fbank, utterance_samples(audio, u), path);
    index += u.id + "\t" + path + "\t" + std::to_string(frames) + "\t" + u.text + "\n";
  }
  write_file_atomic((fs::path(out) / "index.tsv").string(), index);
  std::cout << corpus.utterances.size() << " utterances of " << data << ": features in " << out
            << " (index.tsv)\n";
  return 0;
}

}  // namespace

int FeaturesCommand::run() const {
  const Fbank fbank({.num_mel_bins = bins, .precision = precision});
  if (!data.empty()) return features_of_corpus(data, out, fbank, max_seconds);
  check(!inputs.empty(), "features: give audio files, or --data DIR|MANIFEST");
  const bool one_file = inputs.size() == 1 && fs::path(out).extension() == ".npy";
  if (!one_file) {
    check(fs::path(out).extension() != ".npy", "features: --out ", out,
          " is a .npy file, for one input; ", inputs.size(), " inputs need a directory");
    std::set<std::string> names;
    for (const auto& in : inputs)
      check(names.insert(fs::path(in).stem().string()).second, "features: two inputs named ",
            fs::path(in).stem().string(), " would write one ", fs::path(in).stem().string(),
            ".npy in ", out);
    fs::create_directories(out);
  }
  for (const auto& in : inputs) {
    const Audio a = read_kaldi_scaled(in, max_seconds);
    const std::string path =
        one_file ? out : (fs::path(out) / (fs::path(in).stem().string() + ".npy")).string();
    const int64_t frames = write_features(fbank, a.samples, path);
    std::cout << in << "\t" << path << "\t" << frames << " frames\t" << a.seconds() << " s\n";
  }
  return 0;
}

}  // namespace heed::cli
