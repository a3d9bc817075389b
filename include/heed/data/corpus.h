// Parallel corpora read from the published files of a dataset, with no hand preprocessing:
//   - two line-parallel text files (Multi30k tok/ and raw/),
//   - a TSV file of pairs (Tatoeba/Anki spa.txt: "English<TAB>Spanish[<TAB>attribution]"),
//   - the CMUdict format ("WORD  PH PH PH"; a word with several pronunciations has several
//     lines, all kept as training pairs and, for scoring, as alternative references).
// Leaves out: tokenisation into units and vocabularies (data/vocab.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "heed/util/names.h"

namespace heed {

enum class CorpusFormat {
  Auto,      // cmudict or tsv when the first file looks like one, else parallel text
  Parallel,  // --*-src and --*-tgt, line i of one translates line i of the other
  Tsv,       // one file; columns chosen by the reader
  Cmudict,   // one file; source = the word, target = its phones
  Audio,     // speech: a Kaldi data directory or a "path<TAB>transcript" manifest
             // (data/speech_corpus.h), detected by its wav.scp or its first path's extension
};

struct SentencePair {
  std::string src;  // raw text of the source side
  std::string tgt;  // raw text of the target side
  int64_t line;     // 1-based line in the (first) file, for error messages
};

struct Corpus {
  std::string origin;  // the file(s) read, for messages
  std::vector<SentencePair> pairs;
};

// Two line-parallel files. Errors: different line counts (both files and counts named), an
// empty line on either side (file and line named), and everything read_lines checks.
Corpus read_parallel(const std::string& src_path, const std::string& tgt_path);
// TSV pairs: columns src_col and tgt_col (0-based) of every line; a line with fewer columns or
// an empty field is an error naming file and line.
Corpus read_tsv(const std::string& path, int src_col, int tgt_col);
// Which TSV columns are the source and the target (0-based; Anki's spa.txt is "en<TAB>es", so
// es->en is {1, 0}). parse_tsv_columns reads the CLI's 1-based "SRC,TGT" ("2,1"), as `cut -f`.
struct TsvColumns {
  int src = 0, tgt = 1;
};
TsvColumns parse_tsv_columns(const std::string& spec);
// CMUdict: "WORD  PH PH ...": word, two spaces, phones. A malformed line is an error.
Corpus read_cmudict(const std::string& path);

// Guesses the format of a file from its first line: a tab after an audio file's name (.wav,
// .flac, .ogg, ...) means a speech manifest, any other tab TSV; an upper-case word, two spaces
// and upper-case phones means CMUdict; else parallel text. A directory with a wav.scp is a Kaldi
// data directory.
CorpusFormat detect_format(const std::string& path);
std::span<const Named<CorpusFormat>> names(
    CorpusFormat);  // "auto" | "parallel" | "tsv" | "cmudict" | "audio"
CorpusFormat parse_format(const std::string& name);  // an Error lists the names
// Reads per format; tgt_path is used by Parallel only (and must be given for it), columns by
// Tsv only.
Corpus read_corpus(CorpusFormat format, const std::string& src_path, const std::string& tgt_path,
                   TsvColumns columns = {});

// A deterministic split of one file into train/dev/test (Tatoeba/Anki spa-eng is published
// without one) in which no sentence is in two parts: pairs that share a source or a target
// sentence (one English sentence with several Spanish translations, or the reverse) are one
// group, linked transitively; the groups, numbered k = 1, 2, ... in the order of their first
// line, go by number: k % 50 == 0 test, k % 50 == 25 dev, else train (about 96/2/2 %). Which
// column is the source does not change the parts.
enum class Split { Train, Dev, Test };
Split split_of_group(int64_t k);
std::span<const Named<Split>> names(Split);  // "train" | "dev" | "test"
Split parse_split(const std::string& name);  // an Error lists the names
// The pairs of one part, in file order.
Corpus select_split(const Corpus& all, Split split);

// CMUdict references for scoring: word -> its pronunciations, in file order.
std::map<std::string, std::vector<std::string>> group_alternatives(const Corpus& corpus);

}  // namespace heed
