// Numbers read from JSON files before nlohmann-json casts them (its cast of a float beyond an
// integer type's range is undefined): configs and headers checked whole, state files key by key.
#include <gtest/gtest.h>

#include "heed/util/json.h"
#include "support/errors.h"

namespace heed {
namespace {

TEST(Json, ConfigNumbersAreSizesOrSmallSettings) {
  EXPECT_NO_THROW(
      check_json_numbers(nlohmann::json::parse(R"({"d": 16, "p": 0.1, "l": [1, -2]})"), "c.json"));
  EXPECT_NE(testing::error_of([] {
              check_json_numbers(nlohmann::json::parse(R"({"enc": {"d_model": 1e49}})"), "c.json");
            }).find("c.json: \"d_model\" is 1e+49, beyond the range heed reads"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] {
              check_json_numbers(nlohmann::json::parse(R"({"shape": [2, -3e9]})"), "h");
            }).find("h: \"shape\" is -3e+09"),
            std::string::npos);
}

TEST(Json, IntegersOfStateFilesAreChecked) {
  const auto j = nlohmann::json::parse(
      R"({"step": 12, "best": 1e300, "big": 3000000000, "f": 2.5, "huge": 1e40, "s": "7"})");
  EXPECT_EQ(json_integer<int64_t>(j, "step", "state.json"), 12);
  EXPECT_EQ(json_integer<int64_t>(j, "big", "state.json"), 3000000000);
  for (const char* key : {"f", "huge", "s"})
    EXPECT_NE(testing::error_of([&] {
                json_integer<int64_t>(j, key, "state.json");
              }).find(std::string("state.json: \"") + key + "\" is "),
              std::string::npos)
        << key;
  EXPECT_NE(testing::error_of([&] {
              json_integer<int>(j, "big", "state.json");
            }).find("not an integer heed can read"),
            std::string::npos);
}

}  // namespace
}  // namespace heed
