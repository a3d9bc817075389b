// `heed features`: audio files to Kaldi's log-mel filterbanks, as float32 [frames, bins] .npy
// files (one per input, named after it in --out's directory; or one input to --out FILE.npy).
// Leaves out: reading audio (io/audio.h), the filterbank (data/fbank.h).
#include <filesystem>
#include <iostream>
#include <set>

#include "commands.h"
#include "heed/data/fbank.h"
#include "heed/io/audio.h"
#include "heed/io/npy.h"
#include "heed/util/error.h"

namespace fs = std::filesystem;

namespace heed::cli {

void FeaturesCommand::add(CLI::App& parent) {
  app = parent.add_subcommand(
      "features",
      "Audio (WAV, FLAC, OGG/Vorbis...; any rate and channels, resampled to 16 kHz mono) to "
      "Kaldi's log-mel filterbank features, float32 [frames, bins] .npy files");
  app->add_option("inputs", inputs, "Audio files")->required();
  app->add_option("--out", out,
                  "A directory (created; each input's features as NAME.npy) or, for one input, "
                  "a .npy file")
      ->required();
  app->add_option("--num-mel-bins", bins, "Mel filters (Kaldi's --num-mel-bins)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  app->add_option("--max-audio-seconds", max_seconds, "Longer files are refused")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1e6));
  app->footer(
      "Kaldi's compute-fbank-feats with its defaults and dither off (torchaudio.compliance."
      "kaldi.fbank): 25 ms Povey windows every 10 ms, whole frames only, DC offset removed, "
      "pre-emphasis 0.97, 512-point power spectrum, triangular mel filters from 20 Hz to "
      "Nyquist, natural log; the samples on the 16-bit scale.");
}

int FeaturesCommand::run() const {
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
  const Fbank fbank({.num_mel_bins = bins});
  for (const auto& in : inputs) {
    Audio a = read_audio(in, {.max_seconds = max_seconds});
    for (float& s : a.samples) s *= 32768.f;  // Kaldi's scale
    const std::vector<float> f = fbank.compute(a.samples);
    const int64_t frames = static_cast<int64_t>(f.size()) / fbank.bins();
    const std::string path =
        one_file ? out : (fs::path(out) / (fs::path(in).stem().string() + ".npy")).string();
    write_npy(path, f, {frames, fbank.bins()});
    std::cout << in << "\t" << path << "\t" << frames << " frames\t" << a.seconds() << " s\n";
  }
  return 0;
}

}  // namespace heed::cli
