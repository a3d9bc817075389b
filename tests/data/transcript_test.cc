// Transcript normalisation, case by case as the PyTorch peer's normalise() does it (lower case,
// NFKD minus marks for Latin-1, curly quotes to the apostrophe, anything else a space, spaces
// collapsed), and that it is idempotent.
#include <gtest/gtest.h>

#include "heed/data/transcript.h"

namespace heed {
namespace {

TEST(Transcript, NormalisesAsThePeer) {
  EXPECT_EQ(normalise_transcript("Two young, White males are outside near many bushes."),
            "two young white males are outside near many bushes");
  EXPECT_EQ(normalise_transcript("A man\u2019s caf\u00e9 -- \u00c9t\u00e9 `x`"),
            "a man's cafe ete 'x'");
  EXPECT_EQ(normalise_transcript("Stra\u00dfe  \u00e6ther 42nd\tst."), "stra e ther nd st");
  EXPECT_EQ(normalise_transcript("  \u00d8re \u00f8 \u00fe\u00ff  "), "re y");
  EXPECT_EQ(normalise_transcript("\u4e2d\u6587 ok \xf0\x9f\x98\x80!"), "ok");
  EXPECT_EQ(normalise_transcript(""), "");
  EXPECT_EQ(normalise_transcript("...!?"), "");
}

TEST(Transcript, IsIdempotent) {
  for (const char* s :
       {"Hello, World!", "it's \u201cquoted\u201d", "na\u00efve r\u00e9sum\u00e9"}) {
    const std::string once = normalise_transcript(s);
    EXPECT_EQ(normalise_transcript(once), once) << s;
  }
}

}  // namespace
}  // namespace heed
