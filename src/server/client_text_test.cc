#include "server/client_text.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "server/log.h"

namespace gangway {
namespace {

TEST(ClientTextTest, ValidUtf8IsKept) {
  EXPECT_EQ(shown_client_text("plain"), "plain");
  EXPECT_EQ(shown_client_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9"));
}

TEST(ClientTextTest, EachInvalidByteBecomesAReplacementCharacter) {
  EXPECT_EQ(shown_client_text("a\xff"
                              "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(shown_client_text("caf\xe9"), "caf\xEF\xBF\xBD");  // Latin-1
  // Overlong forms, surrogates, code points past U+10FFFF and cut sequences are all invalid.
  for (const std::string bad : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"}) {
    EXPECT_FALSE(is_valid_utf8(bad)) << bad;
    EXPECT_TRUE(is_valid_utf8(shown_client_text(bad))) << bad;
  }
}

TEST(ClientTextTest, LongTextIsCutAtACharacterBoundaryAndSaysHowLongItWas) {
  const std::string long_text(1000000, 'x');
  const std::string shown = shown_client_text(long_text);
  EXPECT_EQ(shown, std::string(kShownClientTextBytes, 'x') + "... (1000000 bytes)");
  // Two-byte characters: never half of one.
  std::string accents;
  for (int i = 0; i < 100; ++i) accents += "\xc3\xa9";
  const std::string cut = shown_client_text(accents, 5);
  EXPECT_EQ(cut, "\xc3\xa9\xc3\xa9... (200 bytes)");
  EXPECT_TRUE(is_valid_utf8(cut));
}

std::string logged_line(std::string_view value) {
  FILE* file = std::tmpfile();
  Logger(LogLevel::kInfo, fileno(file)).info("event", {{"value", value}});
  std::rewind(file);
  std::string line;
  char buffer[512];
  while (const size_t n = std::fread(buffer, 1, sizeof buffer, file)) line.append(buffer, n);
  std::fclose(file);
  return line.substr(line.find(" event ") + 7);
}

TEST(ClientTextTest, LogLinesEscapeControlAndInvalidBytes) {
  EXPECT_EQ(logged_line("plain"), "value=plain\n");
  EXPECT_EQ(logged_line("caf\xc3\xa9"), "value=caf\xc3\xa9\n");
  EXPECT_EQ(logged_line("a\xff\r\n\x1b"), "value=\"a\\xff\\x0d\\n\\x1b\"\n");
  EXPECT_EQ(logged_line("say \"hi\""), "value=\"say \\\"hi\\\"\"\n");
}

}  // namespace
}  // namespace gangway
