// Transcripts as speech recognition is trained and scored on them (the normalisation of the
// PyTorch peer, ../shared/bench/pytorch/speech_time_to_wer.py, so that error rates compare):
//   lower case; Latin-1 letters with a diacritic to their base letter (NFKD with the combining
//   marks dropped: "é" -> "e"); curly quotes and backtick to the apostrophe; every other
//   character (digits, punctuation, hyphens, letters outside a-z such as "ß" or "æ") to a space;
//   runs of spaces collapsed and the ends stripped. What is left is 28 characters: a-z, the
//   apostrophe and the space.
// Leaves out: number expansion ("2" is not "two") and any other language's letters.
#pragma once

#include <string>
#include <string_view>

namespace heed {

std::string normalise_transcript(std::string_view text);

}  // namespace heed
