// json_number: config floats written as typed and read back as the same float.
#include "heed/util/json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace heed {
namespace {

TEST(JsonNumber, WritesTheShortestFormAndReadsBackTheSameFloat) {
  EXPECT_EQ(nlohmann::json(json_number(0.2f)).dump(), "0.2");
  EXPECT_EQ(nlohmann::json(json_number(0.1f)).dump(), "0.1");
  EXPECT_EQ(nlohmann::json(json_number(0.f)).dump(), "0.0");
  EXPECT_NE(nlohmann::json(static_cast<double>(0.2f)).dump(), "0.2");  // what it avoids
  for (float x : {0.3f, 1e-7f, 123456.789f, 5e-3f, -2.5f, 3.4e38f})
    EXPECT_EQ(static_cast<float>(
                  nlohmann::json::parse(nlohmann::json(json_number(x)).dump()).get<double>()),
              x);
}

}  // namespace
}  // namespace heed
