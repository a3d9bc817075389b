// Utterances to features: each utterance's stretch of its recording (data/speech_corpus.h) on
// Kaldi's 16-bit scale, then its log-mel filterbanks (data/fbank.h). A corpus is computed
// recording by recording, in parallel over recordings (one Fbank; its FFT is per thread), each
// recording read once for its consecutive utterances.
// Leaves out: normalisation and augmentation (the model's front end, train/).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "heed/data/fbank.h"
#include "heed/data/speech_corpus.h"
#include "heed/io/audio.h"

namespace heed {

// A recording's samples on Kaldi's 16-bit scale (x 32768).
Audio read_kaldi_scaled(const std::string& path, double max_seconds);
// The filterbanks [frames, bins] of samples at full scale 1 (read_audio's), put on Kaldi's
// 16-bit scale first, as compute-fbank-feats and torchaudio see them.
std::vector<float> kaldi_fbank(const Fbank& fbank, std::span<const float> samples);

// The samples of utterance u in its recording: an Error names u's line when its stretch is not
// inside the recording (an end within 10 ms past it counts as the end: times rounded by tools).
std::span<const float> utterance_samples(const Audio& recording, const Utterance& u);

struct CorpusFeatures {
  int64_t bins = 0;
  std::vector<std::vector<float>> frames;  // per utterance [n_i, bins], the corpus' order
  std::vector<double> seconds;             // per utterance, of audio
};
CorpusFeatures corpus_features(const SpeechCorpus& corpus, const FbankOptions& options,
                               double max_seconds);

}  // namespace heed
