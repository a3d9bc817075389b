// Utterances to features (see the header).
#include "heed/data/speech_features.h"

#include <cmath>
#include <exception>

#include "heed/util/error.h"

namespace heed {

Audio read_kaldi_scaled(const std::string& path, double max_seconds) {
  Audio a = read_audio(path, {.max_seconds = max_seconds});
  for (float& s : a.samples) s *= 32768.f;
  return a;
}

std::vector<float> kaldi_fbank(const Fbank& fbank, std::span<const float> samples) {
  std::vector<float> scaled(samples.begin(), samples.end());
  for (float& s : scaled) s *= 32768.f;
  return fbank.compute(scaled);
}

std::span<const float> utterance_samples(const Audio& audio, const Utterance& u) {
  const auto n = static_cast<int64_t>(audio.samples.size());
  const auto first = static_cast<int64_t>(std::llround(u.start * audio.sample_rate));
  int64_t last = u.end < 0 ? n : static_cast<int64_t>(std::llround(u.end * audio.sample_rate));
  if (last > n && last - n <= audio.sample_rate / 100) last = n;
  check(first >= 0 && first < last && last <= n, u.where, ": utterance ", u.id, " spans [", u.start,
        ", ", u.end, "] s of ", u.path, ", which holds ", audio.seconds(), " s");
  return std::span<const float>(audio.samples)
      .subspan(static_cast<size_t>(first), static_cast<size_t>(last - first));
}

CorpusFeatures corpus_features(const SpeechCorpus& corpus, const FbankOptions& options,
                               double max_seconds) {
  const auto& us = corpus.utterances;
  CorpusFeatures out;
  out.bins = options.num_mel_bins;
  out.frames.resize(us.size());
  out.seconds.resize(us.size());
  // runs of consecutive utterances of one recording
  std::vector<size_t> runs;
  for (size_t i = 0; i < us.size(); ++i)
    if (i == 0 || us[i].path != us[i - 1].path) runs.push_back(i);
  runs.push_back(us.size());
  const size_t n_runs = runs.size() - 1;
  const Fbank fbank(options);  // thread-safe: one for every thread
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 16)
  for (size_t r = 0; r < n_runs; ++r) {
    try {
      const Audio audio = read_kaldi_scaled(us[runs[r]].path, max_seconds);
      for (size_t i = runs[r]; i < runs[r + 1]; ++i) {
        std::span<const float> x = utterance_samples(audio, us[i]);
        out.frames[i] = fbank.compute(x);
        out.seconds[i] = static_cast<double>(x.size()) / audio.sample_rate;
      }
    } catch (...) {
#pragma omp critical(heed_corpus_features)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  return out;
}

}  // namespace heed
