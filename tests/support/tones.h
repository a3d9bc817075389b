// The spoken tone task the recognizer tests learn: "words" of 2 to 5 letters of a-e, each letter
// a 150 ms tone of its own pitch followed by 50 ms of quiet, with a little noise, written as WAV
// files with a manifest; and the training options of a small recognizer for it.
#pragma once

#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "heed/io/audio.h"
#include "heed/train/train_options.h"
#include "support/temp_dir.h"

namespace heed {

inline constexpr int kRate = 16000;
inline constexpr double kTone = 0.15, kGap = 0.05;

// An utterance of `word`: per letter a tone (a 400 Hz, b 700, c 1100, d 1600, e 2300), then quiet.
inline std::vector<float> speak(const std::string& word, std::mt19937& rng) {
  std::normal_distribution<float> noise(0.f, 0.01f);
  std::vector<float> x;
  for (char c : word) {
    const double hz = std::vector<double>{400, 700, 1100, 1600, 2300}[static_cast<size_t>(c - 'a')];
    for (int k = 0; k < static_cast<int>(kTone * kRate); ++k)
      x.push_back(0.3f * static_cast<float>(std::sin(2 * M_PI * hz * k / kRate)) + noise(rng));
    for (int k = 0; k < static_cast<int>(kGap * kRate); ++k) x.push_back(noise(rng));
  }
  return x;
}

inline std::string random_word(std::mt19937& rng) {
  std::string w;
  const int n = 2 + static_cast<int>(rng() % 4);
  for (int i = 0; i < n; ++i) w += static_cast<char>('a' + rng() % 5);
  return w;
}

// n new tone words drawn from `seed`, and their audio
struct ToneWords {
  std::vector<std::string> words;
  std::vector<std::vector<float>> audio;
};
inline ToneWords tone_words(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  ToneWords t;
  for (int i = 0; i < n; ++i) {
    t.words.push_back(random_word(rng));
    t.audio.push_back(speak(t.words.back(), rng));
  }
  return t;
}

// n utterances as dir/NAME-i.wav and the manifest dir/NAME.tsv; their words
inline std::vector<std::string> make_set(const testing::TempDir& dir, const std::string& name,
                                         int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> words;
  std::ofstream manifest(dir / (name + ".tsv"));
  for (int i = 0; i < n; ++i) {
    words.push_back(random_word(rng));
    const std::string wav = name + "-" + std::to_string(i) + ".wav";
    write_wav(dir / wav, speak(words.back(), rng), kRate);
    manifest << wav << "\t" << words.back() << "\n";
  }
  return words;
}

// Training options for the tone task in `dir` (train.tsv, dev.tsv): a small model, 23 bins.
inline TrainOptions tone_options(const testing::TempDir& dir, const std::string& save,
                                 int64_t steps) {
  TrainOptions o;
  o.seq2seq.train_src = dir / "train.tsv";  // detected: a manifest of .wav files
  o.seq2seq.valid_src = dir / "dev.tsv";
  o.seq2seq.mel_bins = 23;
  o.seq2seq.front_channels = 8;
  o.seq2seq.batch_size = 16;
  o.seq2seq.epochs = 100;
  o.seq2seq.patience = 100;
  o.seq2seq.max_steps = steps;
  o.seq2seq.valid_every = steps / 2;
  o.seq2seq.valid_max = 20;  // of the 30 dev utterances
  o.seq2seq.lr = 3e-3f;
  o.seq2seq.save_dir = dir / save;
  return o;
}

}  // namespace heed
