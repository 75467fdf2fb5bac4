// Some targets (the server and CLI libraries, their tests, the metrics and model tests) compile
// all their files as one translation unit each (gangway_unity_build in CMakeLists.txt;
// docs/decisions/unity-builds.md). There, two files' file-local helpers of the same name
// share one scope: identical signatures fail to compile, but different ones silently become
// overloads, and a call may pick the other file's. This test keeps the file-local names of each
// such target apart.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kSource = fs::path(GANGWAY_SOURCE_DIR) / "src";

// A unity target: the files directly in one source folder, its tests or the rest. Keep this list
// in step with the gangway_unity_build() calls.
struct UnityTarget {
  std::string name;
  std::string folder;
  bool tests;
};

const std::vector<UnityTarget>& unity_targets() {
  static const std::vector<UnityTarget> targets = {
      {"gangway_server", "server", false},
      {"server_tests", "server", true},
      {"gangway_cli", "cli", false},
      {"cli_tests", "cli", true},
      {"metrics_tests", "metrics", true},
      {"model_tests", "model", true},
      {"gangway_test_engine", "test_engine", false},
  };
  return targets;
}

std::vector<fs::path> files_of(const UnityTarget& target) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kSource / target.folder)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || !name.ends_with(".cc") || name == "main.cc") continue;
    if (name.ends_with("_test.cc") == target.tests) files.push_back(entry.path());
  }
  return files;
}

// Names a file defines for itself alone: functions, constants and types at the top level of its
// anonymous namespaces, and `static` functions. (Code at namespace scope starts in column 0 in
// this tree's clang-format style; class members and function bodies are indented.)
std::set<std::string> file_local_names(const fs::path& path) {
  static const std::regex function(R"(^(?:static\s+)?[A-Za-z_][\w:<>,\s\*&]*[\s\*&](\w+)\()");
  static const std::regex constant(R"(^(?:static\s+)?(?:constexpr|const)\b[^=(;]*\s(\w+)\s*[=\{])");
  static const std::regex type(R"(^(?:class|struct|enum(?:\s+class)?)\s+(\w+))");
  std::set<std::string> names;
  std::ifstream in(path);
  std::string line;
  bool anonymous = false;
  while (std::getline(in, line)) {
    if (line.starts_with("namespace {")) {
      anonymous = true;
      continue;
    }
    if (line.starts_with("}  // namespace") && anonymous) {
      anonymous = false;
      continue;
    }
    if (!anonymous && !line.starts_with("static ")) continue;
    std::smatch match;
    if (std::regex_search(line, match, type) || std::regex_search(line, match, constant) ||
        std::regex_search(line, match, function)) {
      names.insert(match[1]);
    }
  }
  return names;
}

TEST(UnityTargets, ParserFindsFileLocalNames) {
  const std::set<std::string> names = file_local_names(kSource / "server" / "openai_request.cc");
  EXPECT_TRUE(names.count("as_integer"));
  EXPECT_TRUE(names.count("chat_prompt"));
  for (const UnityTarget& target : unity_targets()) {
    EXPECT_GT(files_of(target).size(), 1u) << target.name;
  }
}

TEST(UnityTargets, FilesOfOneUnitKeepTheirLocalNamesApart) {
  for (const UnityTarget& target : unity_targets()) {
    std::map<std::string, std::vector<std::string>> files_by_name;
    for (const fs::path& file : files_of(target)) {
      for (const std::string& name : file_local_names(file)) {
        files_by_name[name].push_back(file.filename().string());
      }
    }
    for (const auto& [name, files] : files_by_name) {
      EXPECT_EQ(files.size(), 1u) << target.name << ": '" << name << "' is file-local in "
                                  << ::testing::PrintToString(files)
                                  << "; one translation unit makes them one name";
    }
  }
}

}  // namespace
