// Evaluation metrics, corpus-level:
//   BLEU (Papineni et al. 2002): 4-gram clipped precisions, geometric mean, brevity penalty
//     against the closest reference length. Two conventions: sacreBLEU's (Post 2018: on
//     detokenised text, tokenised by 13a, intl, char or not at all, "exp" smoothing, with its
//     signature) and multi-bleu.perl's (on tokenised text as given, no smoothing).
//   chrF (Popović 2015) and chrF++ (Popović 2017), as sacreBLEU 2 computes them: character
//     1..6-grams without whitespace, and word 1..n-grams with punctuation split off the ends
//     of words; precision and recall averaged over the orders both sides have, F-beta with
//     beta = 2; with sacreBLEU's signature.
//   G2P word and phone error rates: a word is right when its hypothesis equals any reference
//     pronunciation; PER = edit distance to the closest reference over its length, summed.
// Leaves out: TER and model-based metrics.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "heed/metrics/tokenize.h"

namespace heed {

struct BleuOptions {
  // false: multi-bleu.perl's convention (tokenised text as given, split at whitespace, no
  // smoothing, no signature); true: sacreBLEU's
  bool sacrebleu = false;
  BleuTokenize tokenize = BleuTokenize::V13a;  // sacreBLEU's tokeniser
  bool lowercase = false;
  // sacreBLEU's effective order (its sentence_bleu's default): the geometric mean over the
  // orders the hypothesis has n-grams of, not all four
  bool effective_order = false;
};

struct BleuScore {
  double score = 0;                    // 0..100
  std::array<double, 4> precisions{};  // n-gram precisions, percent
  double bp = 0, ratio = 0;            // brevity penalty, hyp_len / ref_len
  int64_t hyp_len = 0, ref_len = 0;
  std::string signature;  // sacreBLEU's, e.g. "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|..."
  std::string verbose() const;  // "68.1/43.2/29.9/20.5 (BP = 1.000 ratio = ... ref_len = 9)"
  // "BLEU = 36.12 <verbose>"; with a signature, as sacreBLEU's text format:
  // "BLEU|<signature> = 36.12 <verbose>". `width`: decimals of the score.
  std::string str(int width = 2) const;
};

// hyps[i] against refs[r][i] (one or more reference sets, each line-parallel to hyps).
BleuScore corpus_bleu(const std::vector<std::string>& hyps,
                      const std::vector<std::vector<std::string>>& refs,
                      const BleuOptions& options = {});
// The signature's last field: "version:heed-<heed's version>".
std::string metric_version();

struct ChrfOptions {
  int char_order = 6;
  int word_order = 0;  // 2: chrF++
  int beta = 2;
  bool lowercase = false;
  bool whitespace = false;     // keep whitespace in the character n-grams
  bool eps_smoothing = false;  // chrF++.py's smoothing, instead of averaging the orders present
};

struct ChrfScore {
  double score = 0;       // 0..100
  std::string name;       // "chrF2", "chrF2++"
  std::string signature;  // "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:..."
  std::string str(int width = 2) const;  // "chrF2|<signature> = 58.61"
};
// With several reference sets, each sentence's statistics are those of its best reference.
ChrfScore corpus_chrf(const std::vector<std::string>& hyps,
                      const std::vector<std::vector<std::string>>& refs,
                      const ChrfOptions& options = {});

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
