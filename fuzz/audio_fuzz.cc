// Fuzz target: audio bytes as heed reads them (io/audio.h read_audio_bytes, the path reader's
// decoder: libsndfile, the truncation and length checks, channel averaging, resampling to
// 16 kHz), then Kaldi's filterbanks of what was read.
#include "heed/data/fbank.h"
#include "heed/io/audio.h"
#include "target.h"

HEED_FUZZ_TARGET(audio) {
  heed::fuzz::expect_error_or_ok([&] {
    const heed::Audio a =
        heed::read_audio_bytes(std::string_view(reinterpret_cast<const char*>(data), size),
                               "fuzz.wav", {.max_seconds = 30});
    const heed::Fbank fbank;
    fbank.compute(a.samples);
  });
}
