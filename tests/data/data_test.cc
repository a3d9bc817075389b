// Text, corpora and vocabularies: the published formats read as they are, and bad input
// (mismatched files, empty lines, invalid UTF-8, malformed entries) rejected with file and line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "heed/data/corpus.h"
#include "heed/data/text.h"
#include "heed/data/vocab.h"
#include "heed/util/error.h"
#include "support/errors.h"

namespace fs = std::filesystem;

namespace heed {
namespace {

struct Files {
  fs::path dir = fs::temp_directory_path() / ("heed_data_" + std::to_string(::getpid()));
  Files() { fs::create_directories(dir); }
  ~Files() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
    return (dir / name).string();
  }
};

using testing::error_of;

// ../shared/data beside the project, when present (it is on the project's machines and CI).
fs::path shared_data() {
  return fs::path(HEED_SOURCE_DIR) / ".." / "shared" / "data";
}

TEST(Text, Utf8Validation) {
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("Grüße, 日本, 🙂"));
  size_t at = 0;
  EXPECT_FALSE(is_valid_utf8("ab\xff", &at));
  EXPECT_EQ(at, 2u);
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // a UTF-16 surrogate
  EXPECT_FALSE(is_valid_utf8("\xe2\x82"));          // truncated sequence
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // beyond U+10FFFF
}

TEST(Text, ReadLinesReportsFileAndLine) {
  Files f;
  EXPECT_EQ(read_lines(f.write("crlf.txt", "a b\r\nc\r\n")),
            (std::vector<std::string>{"a b", "c"}));
  EXPECT_EQ(read_lines(f.write("nonl.txt", "x\ny")).size(), 2u);
  std::string bad = f.write("bad.txt", "fine\nalso fine\nbroken \xc3\x28 here\n");
  std::string m = error_of([&] { read_lines(bad); });
  EXPECT_NE(m.find(bad + ":3: invalid UTF-8"), std::string::npos) << m;
  std::string empty = f.write("empty.txt", "");
  EXPECT_NE(error_of([&] { read_lines(empty); }).find("empty"), std::string::npos);
  std::string nul = f.write("nul.txt", std::string("a\0b\n", 4));
  EXPECT_NE(error_of([&] { read_lines(nul); }).find(":1: NUL byte"), std::string::npos);
}

TEST(Text, UnitsRoundTrip) {
  EXPECT_EQ(split_words("  a\tb  c "), (std::vector<std::string>{"a", "b", "c"}));
  auto chars = split_chars("Grüß dich");
  EXPECT_EQ(chars.size(), 9u);
  EXPECT_EQ(chars[2], "ü");
  EXPECT_EQ(chars[4], std::string(kSpaceUnit));
  EXPECT_EQ(join_chars(chars), "Grüß dich");
}

TEST(Corpus, ParallelFilesMustMatch) {
  Files f;
  std::string src = f.write("a.en", "one\ntwo\nthree\n"), tgt = f.write("a.de", "eins\nzwei\n");
  std::string m = error_of([&] { read_parallel(src, tgt); });
  EXPECT_NE(m.find(src + " has 3 lines"), std::string::npos) << m;
  EXPECT_NE(m.find(tgt + " has 2"), std::string::npos) << m;
  std::string gap = f.write("b.de", "eins\n\ndrei\n");
  EXPECT_NE(error_of([&] { read_parallel(src, gap); }).find(gap + ":2: empty line"),
            std::string::npos);
  Corpus ok = read_parallel(src, f.write("c.de", "eins\nzwei\ndrei\n"));
  ASSERT_EQ(ok.pairs.size(), 3u);
  EXPECT_EQ(ok.pairs[2].tgt, "drei");
  EXPECT_EQ(ok.pairs[2].line, 3);
}

TEST(Corpus, TsvAndCmudictFormats) {
  Files f;
  std::string tsv = f.write("pairs.tsv", "Go.\tVe.\tCC-BY 2.0\nHi.\tHola.\n");
  Corpus c = read_tsv(tsv, 0, 1);
  ASSERT_EQ(c.pairs.size(), 2u);
  EXPECT_EQ(c.pairs[1].tgt, "Hola.");
  std::string short_line = f.write("short.tsv", "Go.\tVe.\nno tab here\n");
  EXPECT_NE(
      error_of([&] { read_tsv(short_line, 0, 1); }).find(short_line + ":2: expected at least 2"),
      std::string::npos);
  std::string dict = f.write("d.dict", "'CAUSE  K AH Z\nREAD  R IY D\nREAD  R EH D\n");
  Corpus d = read_cmudict(dict);
  ASSERT_EQ(d.pairs.size(), 3u);
  EXPECT_EQ(d.pairs[0].src, "'CAUSE");
  EXPECT_EQ(d.pairs[0].tgt, "K AH Z");
  EXPECT_EQ(group_alternatives(d)["READ"].size(), 2u);
  std::string broken = f.write("b.dict", "ABBA  AE B AH\nabba ae b ah\n");
  EXPECT_NE(error_of([&] { read_cmudict(broken); }).find(broken + ":2: not a CMUdict entry"),
            std::string::npos);
  Corpus swapped = read_corpus(CorpusFormat::Tsv, tsv, "", parse_tsv_columns("2,1"));
  EXPECT_EQ(swapped.pairs[1].src, "Hola.");
  EXPECT_EQ(swapped.pairs[1].tgt, "Hi.");
  EXPECT_NE(error_of([&] {
              read_corpus(CorpusFormat::Tsv, tsv, "", parse_tsv_columns("3,1"));
            }).find(tsv + ":2: expected at least 3"),
            std::string::npos);
  for (const char* bad : {"2", "0,1", "1,1", "2,1,3", "a,b", "2,1x"})
    EXPECT_NE(error_of([&] { parse_tsv_columns(bad); }).find("bad TSV columns"), std::string::npos)
        << bad;
  EXPECT_EQ(detect_format(tsv), CorpusFormat::Tsv);
  EXPECT_EQ(detect_format(dict), CorpusFormat::Cmudict);
  EXPECT_EQ(detect_format(f.write("t.en", "a man is walking .\n")), CorpusFormat::Parallel);
  EXPECT_NE(error_of([] { parse_format("xml"); }).find("unknown data format 'xml'"),
            std::string::npos);
}

// The split's groups by hand: 100 distinct pairs and a 101st that links line 50's source to
// line 7's target. Lines 7, 50 and 101 are group 7; lines 51..100 become groups 50..99, so
// test (k % 50 == 0) is line 51 alone and dev (k % 50 == 25) lines 25 and 76.
TEST(Corpus, SplitKeepsLinkedSentencesInOnePart) {
  Corpus c{"hand", {}};
  for (int64_t i = 1; i <= 100; ++i)
    c.pairs.push_back({"s" + std::to_string(i), "t" + std::to_string(i), i});
  c.pairs.push_back({"s50", "t7", 101});
  auto lines = [&](Split part) {
    std::vector<int64_t> out;
    for (const SentencePair& p : select_split(c, part).pairs) out.push_back(p.line);
    return out;
  };
  EXPECT_EQ(lines(Split::Test), std::vector<int64_t>({51}));
  EXPECT_EQ(lines(Split::Dev), std::vector<int64_t>({25, 76}));
  EXPECT_EQ(lines(Split::Train).size(), 98U);
}

TEST(Corpus, SharedDatasetsAsPublished) {
  if (!fs::exists(shared_data())) GTEST_SKIP() << "no ../shared/data";
  fs::path d = shared_data();
  // CMUdict test split: 12,855 entries of 11,994 distinct words (data/README.md)
  Corpus test = read_corpus(CorpusFormat::Auto, (d / "cmudict/cmudict-0.7b.test").string(), "");
  EXPECT_EQ(test.pairs.size(), 12855u);
  EXPECT_EQ(group_alternatives(test).size(), 11994u);
  // Multi30k validation, tokenised en-de: 1,014 line-parallel sentences
  Corpus val = read_corpus(CorpusFormat::Auto, (d / "multi30k/tok/val.lc.norm.tok.en").string(),
                           (d / "multi30k/tok/val.lc.norm.tok.de").string());
  EXPECT_EQ(val.pairs.size(), 1014u);
  // Anki spa-eng: TSV; the documented split is deterministic, covers the file, keeps about
  // 2 % each for dev and test, and no English or Spanish sentence is in two parts
  Corpus anki = read_corpus(CorpusFormat::Auto, (d / "anki-spa-eng/spa.txt").string(), "");
  std::map<std::string, Split> part_of_en, part_of_es;
  size_t counted = 0;
  for (Split part : {Split::Train, Split::Dev, Split::Test}) {
    const Corpus c = select_split(anki, part);
    counted += c.pairs.size();
    if (part != Split::Train) {
      EXPECT_GT(c.pairs.size(), anki.pairs.size() / 60);
      EXPECT_LT(c.pairs.size(), anki.pairs.size() / 40);
    }
    for (const SentencePair& p : c.pairs) {
      EXPECT_EQ(part_of_en.try_emplace(p.src, part).first->second, part) << p.src;
      EXPECT_EQ(part_of_es.try_emplace(p.tgt, part).first->second, part) << p.tgt;
    }
  }
  EXPECT_EQ(counted, anki.pairs.size());
  // the same parts read es->en (columns swapped)
  const Corpus es_en = read_corpus(CorpusFormat::Tsv, (d / "anki-spa-eng/spa.txt").string(), "",
                                   {.src = 1, .tgt = 0});
  const Corpus en_es_test = select_split(anki, parse_split("test"));
  const Corpus es_en_test = select_split(es_en, Split::Test);
  ASSERT_EQ(en_es_test.pairs.size(), es_en_test.pairs.size());
  for (size_t i = 0; i < en_es_test.pairs.size(); ++i)
    EXPECT_EQ(en_es_test.pairs[i].line, es_en_test.pairs[i].line);
  EXPECT_NE(error_of([] { parse_split("valid"); }).find("unknown split 'valid'"),
            std::string::npos);
}

TEST(Vocab, BuildLimitsAndUnknowns) {
  std::vector<std::vector<std::string>> text = {{"a", "b", "a"}, {"c", "a", "b"}, {"d"}};
  Vocab v = Vocab::build(text);
  EXPECT_EQ(v.size(), 8);                     // 4 specials + a b c d
  EXPECT_EQ(v.token(Vocab::kSpecials), "a");  // most frequent first
  EXPECT_EQ(v.token(Vocab::kSpecials + 1), "b");
  EXPECT_EQ(v.id("zzz"), Vocab::kUnk);
  EXPECT_EQ(Vocab::build(text, {.min_freq = 2}).size(), 6);
  EXPECT_EQ(Vocab::build(text, {.max_size = 1}).size(), 5);
  auto ids = v.encode({"a", "zzz", "d"});
  ids.push_back(Vocab::kEos);
  ids.push_back(v.id("b"));  // after EOS: dropped
  EXPECT_EQ(v.decode(ids), (std::vector<std::string>{"a", "<unk>", "d"}));
}

TEST(Vocab, SaveLoadAndBadFiles) {
  Files f;
  Vocab v = Vocab::build({{"der", "hund", "läuft"}});
  std::string path = (f.dir / "vocab.txt").string();
  v.save(path);
  Vocab w = Vocab::load(path);
  ASSERT_EQ(w.size(), v.size());
  EXPECT_EQ(w.id("läuft"), v.id("läuft"));
  std::string dup = f.write("dup.txt", "<pad>\n<s>\n</s>\n<unk>\nx\nx\n");
  EXPECT_NE(error_of([&] { Vocab::load(dup); }).find(dup + ":6: duplicate token"),
            std::string::npos);
  std::string nospec = f.write("nospec.txt", "a\nb\nc\nd\ne\n");
  EXPECT_NE(
      error_of([&] { Vocab::load(nospec); }).find(nospec + ":1: expected the special token <pad>"),
      std::string::npos);
}

}  // namespace
}  // namespace heed
