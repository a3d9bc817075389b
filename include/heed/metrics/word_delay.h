// Latency of streaming recognition as the field measures it (heed transcribe --online's JSON
// lines against a corpus's word timings, spoken Multi30k's *.align.jsonl):
//   per word recognised, its delay = the moment it was given out ("emitted", on the stream's
//   clock) - the end of the word in the audio (the reference's timing); the mean, median and
//   90th percentile over the recognised words (those an edit-distance alignment of the
//   normalised words pairs with the same reference word); and
//   AL in ms (Ma et al. 2020, SimulST's computation-unaware form): per utterance, with d_i the
//   audio read (ms) when output word i was given out and |X| the utterance's duration,
//   AL = 1/tau sum_{i<=tau} (d_i - (i - 1) |X| / |Y|), |Y| the output's words, tau the first
//   word given out with the whole audio read (metrics/latency.h with ms as the source's
//   unit), averaged over utterances;
// (The words of a timing file may differ from the corpus's transcripts, as a synthesiser
// splits "woman's" into "woman 's": score WER on the transcripts, heed score --metric wer.)
// Leaves out: the streaming itself (decode/recognizer_stream.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heed {

struct TimedWord {
  std::string word;
  double end = 0;   // seconds: the reference's end of the word; a stream's emission
  double read = 0;  // a stream's: seconds of audio read when it was given out
};

struct TimedUtterance {
  std::string id;
  std::vector<TimedWord> words;
  double seconds = 0;  // the reference's duration
};

struct WordDelayScore {
  double mean = 0, p50 = 0, p90 = 0;  // seconds, over the recognised words
  int64_t recognised = 0;             // words paired with the same reference word
  double al_ms = 0;                   // AL in milliseconds
  int64_t utterances = 0;
  int64_t ref_words = 0;    // the timing file's
  std::string str() const;  // "word delay mean 0.111 s, p50 ..., AL 256 ms (1014 utterances)"
};

// refs and hyps in the same order (one per utterance); words normalised
// (data/transcript.h) before they are paired.
WordDelayScore word_delays(const std::vector<TimedUtterance>& refs,
                           const std::vector<TimedUtterance>& hyps);

// A corpus's word timings, one JSON object per line: {"id", "seconds", "words": [{"word",
// "start", "end"}]} (heed-spoken-corpus's *.align.jsonl); an Error names the file and line.
std::vector<TimedUtterance> read_word_timings(const std::string& path);
// heed transcribe --online's JSON lines: the final results' words ({"word", "emitted",
// "read"}) of each input id, in the order the ids first come; partial lines skipped.
std::vector<TimedUtterance> read_stream_words(const std::string& path);
// Whether a JSON-lines file's first line is heed transcribe --online's.
bool is_stream_output(const std::string& path);

}  // namespace heed
