// The scenario files shipped under examples/ load: every *.yaml there, including the ones added
// later (examples/validation/), and the default peak mixed load has the shape docs describe. So
// do the examples in docs/scenario.md, so that the documentation cannot drift from the parser.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "core/input_error.h"

namespace gangway {
namespace {

const std::filesystem::path kExamples = std::filesystem::path(GANGWAY_SOURCE_DIR) / "examples";

std::vector<std::filesystem::path> example_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kExamples)) {
    const std::string extension = entry.path().extension().string();
    if (entry.is_regular_file() && (extension == ".yaml" || extension == ".yml")) {
      files.push_back(entry.path());
    }
  }
  return files;
}

TEST(ExamplesTest, EveryExampleScenarioLoads) {
  const std::vector<std::filesystem::path> files = example_files();
  EXPECT_GE(files.size(), 2u);
  for (const std::filesystem::path& file : files) {
    SCOPED_TRACE(file.string());
    try {
      const Scenario scenario = load_scenario(file.string());
      EXPECT_FALSE(scenario.name.empty());
      EXPECT_TRUE(!scenario.streams.empty() || scenario.trace.has_value());
    } catch (const InputError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(ExamplesTest, PeakMixedIsTheDefaultNodeUnderMixedLoad) {
  const Scenario s = load_scenario((kExamples / "peak-mixed.yaml").string());
  EXPECT_EQ(s.name, "peak-mixed");
  EXPECT_EQ(s.node.gpu_count, 8);
  EXPECT_EQ(s.node.hardware.name, "h100-sxm-80gb");
  ASSERT_EQ(s.node.models.size(), 2u);
  EXPECT_EQ(s.node.models[0].name, "llama-3-8b");
  EXPECT_EQ(s.node.models[0].gpus.size(), 8u);
  EXPECT_EQ(s.node.models[0].tensor_parallel, 1);
  ASSERT_NE(s.node.large_model(), nullptr);
  EXPECT_EQ(s.node.large_model()->name, "llama-3-70b");
  EXPECT_EQ(s.node.large_model()->tensor_parallel, 8);
  EXPECT_EQ(s.policy.name, "gangway");
  EXPECT_EQ(s.policy.mode, ExecutionMode::kLease);

  // 85 % of the measured per-tier capacities (docs/capacity.md), half SM and half LM by load.
  double small_rate = 0;
  double large_rate = 0;
  for (const StreamSpec& stream : s.streams) {
    const bool large = s.node.model(stream.model).is_large();
    (large ? large_rate : small_rate) += stream.arrival.rate_per_s;
  }
  EXPECT_DOUBLE_EQ(small_rate, 649);
  EXPECT_DOUBLE_EQ(large_rate, 44);
  ASSERT_EQ(s.streams.size(), 6u);
  const char* classes[] = {"interactive", "standard", "batch"};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(s.streams[i].slo_class, *s.node.find_slo_class(classes[i % 3])) << i;
  }
}

// The ```yaml blocks of docs/scenario.md, in order.
std::vector<std::string> documented_yaml_blocks() {
  std::ifstream in(std::filesystem::path(GANGWAY_SOURCE_DIR) / "docs" / "scenario.md");
  std::vector<std::string> blocks;
  std::string line;
  std::optional<std::string> block;
  while (std::getline(in, line)) {
    if (!block && line == "```yaml") {
      block.emplace();
    } else if (block && line == "```") {
      blocks.push_back(*block);
      block.reset();
    } else if (block) {
      *block += line + "\n";
    }
  }
  return blocks;
}

TEST(ExamplesTest, DocumentedExamplesParse) {
  const std::vector<std::string> blocks = documented_yaml_blocks();
  ASSERT_EQ(blocks.size(), 2u);
  // As if the file were in examples/, as the document says.
  const std::string path = (kExamples / "documented.yaml").string();
  try {
    const Scenario full = parse_scenario(blocks[0], path);
    EXPECT_EQ(full.name, "full-example");
    EXPECT_EQ(full.node.models.size(), 3u);
    EXPECT_EQ(full.streams.size(), 4u);
    EXPECT_EQ(full.policy.name, "gangway");
    // The second block replaces the first one's workload section.
    const std::string head = blocks[0].substr(0, blocks[0].find("\nworkload:\n") + 1);
    const Scenario replay = parse_scenario(head + blocks[1], path);
    ASSERT_TRUE(replay.trace.has_value());
    EXPECT_EQ(replay.trace->format, TraceFormat::mooncake);
    EXPECT_EQ(replay.trace->rules.size(), 2u);
  } catch (const InputError& e) {
    FAIL() << e.what();
  }
}

}  // namespace
}  // namespace gangway
