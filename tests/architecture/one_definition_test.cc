// Every named type at namespace scope in the project's headers has one definition. Two headers
// that define `gangway::X` differently compile and link without a word, yet the program is
// undefined: an inline member of one (a constructor, say) may be used on objects laid out as the
// other, writing past their end.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kSource = fs::path(GANGWAY_SOURCE_DIR) / "src";

// Types a header defines at namespace scope: a definition starts in column 0 in this tree's
// clang-format style, and ends its head with `{` (a forward declaration ends with `;`).
std::vector<std::string> types_defined_in(const fs::path& header) {
  static const std::regex definition(
      R"(^(?:struct|class|union|enum(?:\s+class|\s+struct)?)\s+(?:\[\[[^\]]*\]\]\s*)?(\w+)(?:[^;{]*\{|[^;]*$))");
  std::vector<std::string> names;
  std::ifstream in(header);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch match;
    if (std::regex_search(line, match, definition)) names.push_back(match[1]);
  }
  return names;
}

TEST(OneDefinitionTest, NoTwoHeadersDefineATypeOfTheSameName) {
  std::map<std::string, std::vector<std::string>> where;
  for (const auto& entry : fs::recursive_directory_iterator(kSource)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".h") continue;
    for (const std::string& name : types_defined_in(entry.path())) {
      where[name].push_back(fs::relative(entry.path(), kSource).string());
    }
  }
  ASSERT_GT(where.size(), 100u) << "the scan found too few types to be reading the headers";
  for (const auto& [name, headers] : where) {
    EXPECT_EQ(headers.size(), 1u) << name << " is defined in " << testing::PrintToString(headers);
  }
}

TEST(OneDefinitionTest, TheScanSeesDefinitionsAndSkipsDeclarations) {
  const fs::path file = fs::temp_directory_path() / "gangway_one_definition_probe.h";
  {
    std::ofstream out(file);
    out << "struct Declared;\n"
           "struct Defined {\n"
           "  struct Nested {};\n"
           "};\n"
           "enum class Mode : int { kA };\n"
           "class Derived final : public Base {\n";
  }
  EXPECT_EQ(types_defined_in(file), (std::vector<std::string>{"Defined", "Mode", "Derived"}));
  fs::remove(file);
}

}  // namespace
