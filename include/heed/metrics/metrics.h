// Evaluation metrics, corpus-level:
//   BLEU (Papineni et al. 2002): 4-gram clipped precisions, geometric mean, brevity penalty
//     against the closest reference length. Two conventions: on text as given (multi-bleu.perl
//     on tokenised text; no smoothing) and sacreBLEU's (13a tokeniser on detokenised text,
//     "exp" smoothing, with its signature).
//   chrF (Popović 2015), as sacreBLEU computes it: character 1..6-grams without whitespace,
//     precision and recall averaged over orders, F-beta with beta = 2.
//   G2P word and phone error rates: a word is right when its hypothesis equals any reference
//     pronunciation; PER = edit distance to the closest reference over its length, summed.
// Leaves out: TER and model-based metrics.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace heed {

struct BleuOptions {
  bool tokenize_13a = false;  // sacreBLEU mode: 13a tokenisation and exp smoothing
  bool lowercase = false;
};

struct BleuScore {
  double score = 0;                    // 0..100
  std::array<double, 4> precisions{};  // n-gram precisions, percent
  double bp = 0, ratio = 0;            // brevity penalty, hyp_len / ref_len
  int64_t hyp_len = 0, ref_len = 0;
  std::string signature;    // sacreBLEU mode only
  std::string str() const;  // "BLEU = 36.12 68.1/43.2/29.9/20.5 (BP = 1.000 ...)"
};

// hyps[i] against refs[r][i] (one or more reference sets, each line-parallel to hyps).
BleuScore corpus_bleu(const std::vector<std::string>& hyps,
                      const std::vector<std::vector<std::string>>& refs,
                      const BleuOptions& options = {});
// mteval-v13a tokenisation, as sacreBLEU's default.
std::string tokenize_13a(const std::string& line);

struct ChrfScore {
  double score = 0;  // 0..100
  std::string str() const;
};
ChrfScore corpus_chrf(const std::vector<std::string>& hyps,
                      const std::vector<std::vector<std::string>>& refs, int char_order = 6,
                      double beta = 2.0);

struct G2pScore {
  double wer = 0, per = 0;  // percent
  int64_t words = 0, phones = 0;
  std::string str() const;
};
// hyps: word -> hypothesis phones ("AH B"); refs: word -> alternatives. Every reference word
// must have a hypothesis (an error names the first one missing).
G2pScore g2p_error_rates(const std::map<std::string, std::string>& hyps,
                         const std::map<std::string, std::vector<std::string>>& refs);

// Classification accuracy and the confusion matrix (rows: reference class, columns: predicted).
struct AccuracyScore {
  double accuracy = 0;  // percent
  int64_t n = 0;
  std::vector<std::vector<int64_t>> confusion;  // [C][C]
  std::string str() const;                      // "acc = 85.12 (1550/1821)" and the matrix
};
AccuracyScore accuracy(const std::vector<int32_t>& refs, const std::vector<int32_t>& hyps);

// Levenshtein distance between token sequences.
int64_t edit_distance(const std::vector<std::string>& a, const std::vector<std::string>& b);

// Speech recognition's error rates, corpus-level: the edits (substitutions, deletions,
// insertions) of every hypothesis against its reference, over the references' length. Words
// are whitespace-separated; characters are Unicode code points, spaces included (runs of
// whitespace count as one space, the ends stripped). Transcripts are compared as given:
// normalise them first (data/transcript.h).
struct ErrorRate {
  int64_t edits = 0, length = 0;            // length: of the references, in words or characters
  double percent() const;                   // 100 edits / length (0 for empty references)
  std::string str(const char* name) const;  // "WER = 12.34 (567/4593)"
};
ErrorRate word_error_rate(const std::vector<std::string>& hyps,
                          const std::vector<std::string>& refs);
ErrorRate char_error_rate(const std::vector<std::string>& hyps,
                          const std::vector<std::string>& refs);

}  // namespace heed
