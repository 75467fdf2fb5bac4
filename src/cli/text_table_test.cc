#include "cli/text_table.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace gangway {
namespace {

TEST(TextTable, ColumnsLineUpAndANameTooLongForItsColumnGetsALineOfItsOwn) {
  TextTable table({"name", "a", "b"});
  table.add_row({"short", "1", "22"});
  table.add_row({std::string(35, 'x'), "333", "4"});
  table.add_row({std::string(150, 'y'), "5", "6"});
  std::ostringstream out;
  table.print(out, 40);
  std::istringstream lines(out.str());
  std::string header, first, long_name, second, longer_name, third;
  for (std::string* line : {&header, &first, &long_name, &second, &longer_name, &third}) {
    std::getline(lines, *line);
    EXPECT_LE(line->size(), 40u) << *line;
  }
  EXPECT_EQ(long_name, std::string(35, 'x'));  // whole, not cut
  EXPECT_EQ(second.find_first_not_of(' '), second.find("333"));
  EXPECT_EQ(first.find('1'), second.find("333") + 2) << first << "\n" << second;
  EXPECT_EQ(longer_name, std::string(39, 'y') + "~");  // only a name wider than a line is cut
  EXPECT_EQ(third.size(), second.size());
}

TEST(TextTable, DashesMarkMissingFiguresAndSpreadsUseOneColumnForPlusMinus) {
  EXPECT_EQ(dash_or(std::nullopt, 1), "-");
  EXPECT_EQ(percent_or_dash(std::nullopt), "-");
  EXPECT_EQ(percent_or_dash(0.5), "50.0%");
  EXPECT_EQ(with_spread(12.345, 0.4, 1), "12.3 ±0.4");
  EXPECT_EQ(with_spread(0.5, std::nullopt, 1, true), "50.0%");
  TextTable table({"name", "value"});
  table.add_row({"a", "1.0 ±0.1"});
  table.add_row({"b", "22.0"});
  std::ostringstream out;
  table.print(out);
  EXPECT_NE(out.str().find("a    1.0 ±0.1\nb        22.0\n"), std::string::npos) << out.str();
}

TEST(TextTable, WrappedListsBreakBetweenItems) {
  std::ostringstream out;
  print_wrapped(out, "not completed", {"deadline_unmeetable 1234", "queue_full 56", "shed 7"}, 2,
                40);
  EXPECT_EQ(out.str(),
            "  not completed: deadline_unmeetable 1234,\n"
            "                 queue_full 56, shed 7\n");
}

TEST(TextTable, AParagraphWrapsAtWordsUnderItsFirstWord) {
  std::ostringstream out;
  print_paragraph(out, "note", "one two three four five six", 16);
  EXPECT_EQ(out.str(), "note: one two\n      three four\n      five six\n");
}

}  // namespace
}  // namespace gangway
