// CTranslate2's model.bin: written and read back bit for bit; the bytes of a small file against
// the layout model_spec.py writes; a damaged file is an Error naming it.
#include <gtest/gtest.h>

#include <cstring>

#include "heed/io/ctranslate2.h"
#include "heed/util/error.h"

namespace heed::ct2 {
namespace {

TEST(Ct2ModelBin, RoundTripAndLayout) {
  const float w[6] = {1, 2, 3, 4, 5, 6};
  ModelBin m{.spec = "TransformerSpec", .revision = 7, .variables = {}, .aliases = {}};
  m.variables["a/weight"] = float_tensor({2, 3}, w);
  m.variables["a/num_heads"] = int16_scalar(8);
  m.variables["a/pre_norm"] = int8_scalar(1);
  m.aliases["b/weight"] = "a/weight";
  const std::string bytes = encode_model_bin(m);
  // version 6, then the spec's name as u16 (length + 1), its bytes and a NUL, the revision
  uint32_t version = 0;
  std::memcpy(&version, bytes.data(), 4);
  EXPECT_EQ(version, 6u);
  EXPECT_EQ(bytes.substr(4, 2), std::string("\x10\x00", 2));
  EXPECT_EQ(bytes.substr(6, 16), std::string("TransformerSpec\0", 16));
  // the variables in name order: a/num_heads (int16 scalar: rank 0, dtype 2, 2 bytes) first
  const size_t first = 4 + 2 + 16 + 4 + 4;
  EXPECT_EQ(bytes.substr(first, 2 + 12), std::string("\x0c\x00"
                                                     "a/num_heads\0",
                                                     14));
  EXPECT_EQ(bytes.substr(first + 14, 1 + 1 + 4), std::string("\x00\x02\x02\x00\x00\x00", 6));
  const ModelBin back = decode_model_bin(bytes, "m.bin");
  EXPECT_EQ(back.spec, "TransformerSpec");
  EXPECT_EQ(back.revision, 7u);
  ASSERT_EQ(back.variables.size(), 3u);
  EXPECT_EQ(back.variables.at("a/weight").shape, (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(back.variables.at("a/weight").bytes, m.variables.at("a/weight").bytes);
  EXPECT_EQ(back.variables.at("a/pre_norm").dtype, DType::Int8);
  EXPECT_EQ(back.aliases, m.aliases);
  // damage: truncated, trailing bytes, an alias of nothing
  EXPECT_THROW(decode_model_bin(bytes.substr(0, bytes.size() - 3), "m.bin"), Error);
  EXPECT_THROW(decode_model_bin(bytes + "x", "m.bin"), Error);
  m.aliases["c"] = "nothing";
  EXPECT_THROW(encode_model_bin(m), Error);
  try {
    decode_model_bin(bytes.substr(0, 10), "m.bin");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("m.bin: truncated"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace heed::ct2
