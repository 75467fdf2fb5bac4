// Keeps the architecture honest: layers include only downward, and the scheduler core (core,
// model, kv, sched) and the batching model stay sans-I/O: no clock reads, threads, sockets, process
// randomness or files. A paragraph in docs/architecture.md says the same; this test enforces it.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kSource = fs::path(GANGWAY_SOURCE_DIR) / "src";

// Which layers each layer may include (itself included).
const std::map<std::string, std::set<std::string>>& allowed_includes() {
  static const std::map<std::string, std::set<std::string>> allowed = {
      {"core", {"core"}},
      {"http", {"core", "http"}},
      {"model", {"core", "model"}},
      {"kv", {"core", "model", "kv"}},
      {"batching", {"core", "model", "kv", "batching"}},
      {"metrics", {"core", "metrics"}},
      {"workload", {"core", "workload"}},
      {"sched", {"core", "model", "kv", "sched"}},
      {"sim", {"core", "model", "kv", "metrics", "workload", "sched", "batching", "sim"}},
      {"config", {"core", "model", "kv", "metrics", "workload", "sched", "sim", "config"}},
      {"engine", {"core", "model", "kv", "metrics", "sched", "engine"}},
      {"server",
       {"core", "http", "model", "kv", "metrics", "workload", "sched", "sim", "config", "engine",
        "server"}},
      {"client",
       {"core", "http", "model", "kv", "metrics", "workload", "sched", "sim", "config", "engine",
        "server", "client"}},
      {"test_engine", {"core", "http", "model", "kv", "batching", "config", "test_engine"}},
      {"cli",
       {"core", "http", "model", "kv", "metrics", "workload", "sched", "sim", "config", "engine",
        "server", "client", "batching", "test_engine", "cli"}},
  };
  return allowed;
}

// The sans-I/O layers and what they must never use.
const std::set<std::string> kSansIoLayers = {"core", "model", "kv", "sched", "batching"};
const std::vector<std::pair<std::regex, std::string>>& forbidden_in_core() {
  static const std::vector<std::pair<std::regex, std::string>> patterns = {
      {std::regex(R"(system_clock|steady_clock|high_resolution_clock)"), "a clock read"},
      {std::regex(R"(\bgettimeofday\b|\bclock_gettime\b|\btime\(\s*(nullptr|NULL|0)\s*\))"),
       "a clock read"},
      {std::regex(R"(#include\s*<(thread|mutex|condition_variable|future|atomic)>)"), "threads"},
      {std::regex(R"(std::thread|std::mutex|std::async)"), "threads"},
      {std::regex(R"(random_device|\bstd::rand\b|\bsrand\b)"), "process randomness"},
      {std::regex(R"(#include\s*<(sys/socket\.h|netinet/|arpa/|boost/asio|boost/beast))"),
       "sockets"},
      {std::regex(R"(#include\s*<(fstream|cstdio|iostream)>)"), "file or console I/O"},
  };
  return patterns;
}

struct SourceFile {
  std::string layer;
  fs::path path;
  std::string text;
};

std::vector<SourceFile> source_files() {
  std::vector<SourceFile> files;
  for (const auto& entry : fs::recursive_directory_iterator(kSource)) {
    if (!entry.is_regular_file()) continue;
    const std::string ext = entry.path().extension().string();
    if (ext != ".h" && ext != ".cc") continue;
    const std::string name = entry.path().filename().string();
    if (name.ends_with("_test.cc") || name.ends_with("_for_tests.h")) continue;
    SourceFile file;
    file.layer = fs::relative(entry.path(), kSource).begin()->string();
    file.path = entry.path();
    std::ifstream in(entry.path());
    std::stringstream buffer;
    buffer << in.rdbuf();
    file.text = buffer.str();
    files.push_back(std::move(file));
  }
  return files;
}

// Comments may mention what the code must not do; look only at code.
std::string without_comments(const std::string& text) {
  static const std::regex line_comment(R"(//[^\n]*)");
  return std::regex_replace(text, line_comment, "");
}

TEST(Layering, FoundTheSources) {
  EXPECT_GT(source_files().size(), 20u);
}

TEST(Layering, LayersIncludeOnlyDownward) {
  static const std::regex include(R"(#include\s+"([a-z_]+)/)");
  for (const SourceFile& file : source_files()) {
    auto allowed = allowed_includes().find(file.layer);
    ASSERT_NE(allowed, allowed_includes().end()) << "unknown layer folder " << file.layer;
    for (std::sregex_iterator it(file.text.begin(), file.text.end(), include), end; it != end;
         ++it) {
      const std::string target = (*it)[1];
      EXPECT_TRUE(allowed->second.count(target))
          << file.path << " (layer " << file.layer << ") includes the higher layer " << target;
    }
  }
}

TEST(Layering, SchedulerCoreIsSansIo) {
  for (const SourceFile& file : source_files()) {
    if (!kSansIoLayers.count(file.layer)) continue;
    const std::string code = without_comments(file.text);
    for (const auto& [pattern, what] : forbidden_in_core()) {
      EXPECT_FALSE(std::regex_search(code, pattern))
          << file.path << " uses " << what << "; the core takes time and I/O from its driver";
    }
  }
}

}  // namespace
