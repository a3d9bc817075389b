// The bounds of every decoding option, in one place. Every search checks its BeamOptions
// (check_beam_options, decode/beam_search.h) and the Translator its TranslationOptions and
// TranslatorOptions (check_translation_options, decode/translator.h), so that heed translate,
// attention and report, Python and the server all go through the same checks and no option
// turns into unbounded time or memory (a beam of 100,000 once grew to 21 GB; a ratio of 1e19
// overflowed the output limit into empty outputs). Messages give finite bounds.
// Leaves out: the server's own, smaller limits (ServeOptions), which it checks first.
#pragma once

#include <cstdint>

namespace heed::limits {

inline constexpr int64_t kMaxBeam = 1024;        // hypotheses per sentence
inline constexpr int64_t kMaxBatch = 4096;       // sentences decoded together
inline constexpr int64_t kMaxRows = 65536;       // beam x batch: the rows of one search step
inline constexpr double kMaxLenRatio = 1000;     // output units per source unit
inline constexpr int64_t kMaxLength = 1 << 20;   // output units, and input units kept
inline constexpr double kMaxLengthPenalty = 10;  // |alpha| in log p / len^alpha
inline constexpr double kMaxLmWeight = 1000;     // |w| and |b| of CTC's n-gram LM terms
// threads: kernels/parallel.h kMaxThreads, checked by set_threads

}  // namespace heed::limits
