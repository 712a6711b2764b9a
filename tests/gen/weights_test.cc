// The generator's step weights are stated once, in fuzz/gen/weights.h; the table
// of docs/generators.md quotes them, and this test keeps the two equal.

#include "fuzz/gen/weights.h"

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace {

TEST(GenWeights, DocsQuoteTheStepTable) {
  const std::string path = std::string(CDS_SOURCE_DIR) + "/docs/generators.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::vector<std::string> rows;
  const std::regex row(R"(^\| `([a-z_]+)` \| ([0-9]+) \|)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row)) rows.push_back(m[1].str() + " " + m[2].str());
  }
  std::vector<std::string> weights;
#define CDS_GEN_STEP_WEIGHT_ROW(F, W) weights.push_back(fmt::format("{} {}", #F, W));
  CDS_GEN_STEP_WEIGHTS(CDS_GEN_STEP_WEIGHT_ROW)
#undef CDS_GEN_STEP_WEIGHT_ROW
  EXPECT_EQ(rows, weights) << path;
}

}  // namespace
