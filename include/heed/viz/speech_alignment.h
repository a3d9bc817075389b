// Where a recognizer listens: Chorowski et al. 2015's figure (fig. 1 and 3), a transcript's
// alignment over the model frames (rows: its units and </s>, or CTC's blank; columns: frames of
// 40 ms) stacked above the utterance's log-mel spectrogram on the same time axis (each column
// the mean of the 4 filterbank frames a model frame subsamples; rows: mel bins, high at the
// top, pooled to at most 40 rows), so that each unit's weight can be read against the sound.
// Leaves out: recognition (decode/recognizer.h), drawing and files (figure.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "heed/decode/recognizer.h"
#include "heed/viz/heatmap.h"

namespace heed::viz {

// t: decoded with RecognizeOptions::alignment; features: the utterance's filterbanks [frames,
// bins] (Recognizer::features); ctc: the last row is the blank (else </s>). Throws heed::Error
// when they do not fit.
Figure speech_alignment_figure(const Transcript& t, std::span<const float> features, int64_t bins,
                               bool ctc, const HeatmapStyle& style, const std::string& title);

}  // namespace heed::viz
