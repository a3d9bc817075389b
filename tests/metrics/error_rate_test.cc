// Word and character error rates by hand: substitutions, insertions and deletions counted once
// each, corpus-level (summed edits over summed reference lengths), spaces counted as characters,
// runs of whitespace as one space; and a length mismatch refused.
#include <gtest/gtest.h>

#include "heed/metrics/metrics.h"
#include "heed/util/error.h"

namespace heed {
namespace {

TEST(ErrorRate, WordsByHand) {
  // "a cat sat" -> "a bat sat down": 1 substitution + 1 insertion over 3 words;
  // "the dog" -> "dog": 1 deletion over 2
  const ErrorRate e = word_error_rate({"a bat sat down", "dog"}, {"a cat sat", "the dog"});
  EXPECT_EQ(e.edits, 3);
  EXPECT_EQ(e.length, 5);
  EXPECT_DOUBLE_EQ(e.percent(), 60.0);
  EXPECT_EQ(e.str("WER"), "WER = 60.00 (3/5)");
}

TEST(ErrorRate, CharactersCountSpaces) {
  // "ab cd" (5 characters) -> "abcd": the space deleted; "x" -> "y  z": x->y, + " z"
  const ErrorRate e = char_error_rate({"abcd", "y  z"}, {"ab  cd", "x"});
  EXPECT_EQ(e.length, 6);
  EXPECT_EQ(e.edits, 1 + 3);
  const ErrorRate u = char_error_rate({"\u00e9t\u00e9"}, {"ete"});  // code points, not bytes
  EXPECT_EQ(u.edits, 2);
  EXPECT_EQ(u.length, 3);
}

TEST(ErrorRate, EmptyReferencesAndMismatches) {
  EXPECT_EQ(word_error_rate({""}, {""}).percent(), 0.0);
  EXPECT_EQ(word_error_rate({"extra words"}, {""}).edits, 2);
  EXPECT_THROW(word_error_rate({"a"}, {"a", "b"}), Error);
}

}  // namespace
}  // namespace heed
