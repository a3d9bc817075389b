// The name tables (util/names.h): every value of every table parses back from its name, names
// are distinct, and an unknown name is an error that names the option and lists the choices.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "heed/autograd/graph.h"
#include "heed/data/corpus.h"
#include "heed/data/segmenter.h"
#include "heed/decode/translator.h"
#include "heed/metrics/tokenize.h"
#include "heed/models/sentence_classifier.h"
#include "heed/nn/attention/attention.h"
#include "heed/nn/rnn.h"
#include "heed/nn/transformer.h"
#include "heed/viz/report.h"
#include "support/errors.h"

namespace heed {
namespace {

template <class E>
void expect_round_trips(size_t size) {
  std::set<std::string> seen;
  ASSERT_EQ(name_table<E>().size(), size);
  for (const auto& n : name_table<E>()) {
    EXPECT_TRUE(seen.insert(n.name).second) << "twice: " << n.name;
    EXPECT_EQ(parse_name<E>(n.name, "x"), n.value);
    EXPECT_STREQ(name_of(n.value), n.name);
  }
  const std::string err = testing::error_of([] { parse_name<E>("nope", "--flag"); });
  EXPECT_NE(err.find("unknown --flag 'nope' (expected " + choices<E>() + ")"), std::string::npos)
      << err;
}

TEST(Names, EveryTableRoundTrips) {
  expect_round_trips<AttentionKind>(13);
  expect_round_trips<BleuTokenize>(4);
  expect_round_trips<HardTraining>(3);
  expect_round_trips<NormPlacement>(2);
  expect_round_trips<FfnActivation>(2);
  expect_round_trips<Positions>(2);
  expect_round_trips<CellKind>(2);
  expect_round_trips<Units>(3);
  expect_round_trips<SpmType>(2);
  expect_round_trips<CorpusFormat>(5);
  expect_round_trips<Split>(3);
  expect_round_trips<Precision>(2);
  expect_round_trips<Pooling>(5);
  expect_round_trips<ComputeType>(2);
  expect_round_trips<viz::SampleChoice>(4);
  EXPECT_EQ(choices<Units>(), "word | char | spm");
}

}  // namespace
}  // namespace heed
