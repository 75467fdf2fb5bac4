#include "config/yaml_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace gangway {
namespace {

using ::testing::HasSubstr;

// The message of the InputError that `read` throws, or a test failure.
template <typename Read>
std::string error_of(Read&& read) {
  try {
    read();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return "";
}

TEST(YamlReaderTest, ReadsTypedValuesWithTheirPathsAndLines) {
  YamlDocument document("a: 1\nb:\n  c: 2.5\n  d: [x, y]\n  e: true\n", "f.yaml");
  const YamlMap root = document.root().map({"a", "b"});
  EXPECT_EQ(root.required("a").integer(), 1);
  const YamlMap b = root.required("b").map({"c", "d", "e"});
  EXPECT_DOUBLE_EQ(b.required("c").number(), 2.5);
  EXPECT_EQ(b.required("c").path(), "b.c");
  EXPECT_EQ(b.required("c").line(), 3);
  const std::vector<YamlValue> items = b.required("d").list();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1].path(), "b.d[1]");
  EXPECT_EQ(items[1].text(), "y");
  EXPECT_TRUE(b.required("e").boolean());
  EXPECT_FALSE(b.get("missing").has_value());
}

TEST(YamlReaderTest, UnknownKeyNamesThePathAndTheAllowedKeys) {
  YamlDocument document("a: 1\nb:\n  c: 2\n  colour: red\n", "f.yaml");
  const YamlMap root = document.root().map({"a", "b"});
  EXPECT_EQ(error_of([&] {
              root.required("b").map({"c", "d"});
            }),
            "f.yaml:4: b.colour: unknown key; allowed keys here: c, d");
}

TEST(YamlReaderTest, DuplicateKeyIsAnError) {
  YamlDocument document("a: 1\nb: 2\na: 3\n", "f.yaml");
  EXPECT_EQ(error_of([&] {
              document.root().map({"a", "b"});
            }),
            "f.yaml:3: a: duplicate key (first written on line 1)");
}

TEST(YamlReaderTest, WrongTypesSayWhatWasExpected) {
  YamlDocument document(
      "n: abc\nw: 1.5\nl: 3\nm: [1]\nq: \"42\"\nb: maybe\ninf: .inf\nbig: 1e400\n", "f.yaml");
  const YamlMap root = document.root().map({"n", "w", "l", "m", "q", "b", "inf", "big"});
  EXPECT_EQ(error_of([&] { root.required("n").number(); }),
            "f.yaml:1: n: expected a number, got 'abc'");
  EXPECT_EQ(error_of([&] { root.required("w").integer(); }),
            "f.yaml:2: w: expected a whole number, got '1.5'");
  EXPECT_EQ(error_of([&] { root.required("l").list(); }), "f.yaml:3: l: expected a list, got '3'");
  EXPECT_THAT(error_of([&] { root.required("m").map({"x"}); }),
              HasSubstr("f.yaml:4: m: expected a mapping"));
  EXPECT_THAT(error_of([&] { root.required("q").number(); }),
              HasSubstr("f.yaml:5: q: expected a number, got the quoted text '42'"));
  EXPECT_EQ(error_of([&] { root.required("b").boolean(); }),
            "f.yaml:6: b: expected true or false, got 'maybe'");
  EXPECT_THAT(error_of([&] { root.required("inf").number(); }),
              HasSubstr("f.yaml:7: inf: expected a"));
  EXPECT_THAT(error_of([&] { root.required("big").number(); }),
              HasSubstr("f.yaml:8: big: expected a"));
}

TEST(YamlReaderTest, RangeChecksNameTheRange) {
  YamlDocument document("a: -1\nb: 1.5\nc: 0\nd: x\n", "f.yaml");
  const YamlMap root = document.root().map({"a", "b", "c", "d"});
  EXPECT_EQ(error_of([&] { root.required("a").positive_number(); }),
            "f.yaml:1: a: expected a number > 0, got -1");
  EXPECT_EQ(error_of([&] { root.required("b").number_in(0, 1, true, false); }),
            "f.yaml:2: b: expected a number in (0, 1], got 1.5");
  EXPECT_EQ(error_of([&] { root.required("c").int32_at_least(1); }),
            "f.yaml:3: c: expected a whole number >= 1, got 0");
  EXPECT_EQ(error_of([&] {
              root.required("d").choice({"p", "q"});
            }),
            "f.yaml:4: d: expected one of p, q, got 'x'");
}

TEST(YamlReaderTest, MissingRequiredKeyPointsAtItsMapping) {
  YamlDocument document("a:\n  b: 1\n", "f.yaml");
  const YamlMap a = document.root().map({"a"}).required("a").map({"b", "c"});
  EXPECT_EQ(error_of([&] { a.required("c"); }),
            "f.yaml:1: a.c: expected a value: this key is required");
}

TEST(YamlReaderTest, RestrictToExplainsWhyAKeyIsNotUsed) {
  YamlDocument document("kind: p\nx: 1\ny: 2\n", "f.yaml");
  const YamlMap root = document.root().map({"kind", "x", "y"});
  EXPECT_EQ(error_of([&] {
              root.restrict_to({"kind", "x"}, "kind: p");
            }),
            "f.yaml:3: y: not used by kind: p; allowed keys there: kind, x");
}

TEST(YamlReaderTest, SyntaxErrorHasFileAndLine) {
  const std::string message = error_of([] { YamlDocument("a: 1\nb: [1, 2\nc: 3\n", "f.yaml"); });
  EXPECT_THAT(message, HasSubstr("f.yaml:"));
  EXPECT_THAT(message, HasSubstr("YAML syntax error"));
  const std::string tab = error_of([] { YamlDocument("a:\n  b: 1\n c: 2\n", "f.yaml"); });
  EXPECT_THAT(tab, HasSubstr("f.yaml:3: YAML syntax error"));
}

TEST(YamlReaderTest, LocateFindsTheLineOfTheNearestKnownKey) {
  YamlDocument document("top:\n  list:\n    - a: 1\n      b: 2\n", "f.yaml");
  const YamlMap top = document.root().map({"top"}).required("top").map({"list"});
  for (const YamlValue& item : top.required("list").list()) item.map({"a", "b"});
  EXPECT_EQ(document.line_of("top.list[0].b"), 4);
  EXPECT_EQ(document.line_of("top.list[0].b.deeper"), 4);
  EXPECT_EQ(document.line_of("top.list[0].zzz"), 3);
  EXPECT_EQ(document.line_of("elsewhere"), std::nullopt);
  EXPECT_STREQ(document.locate(InputError("top.list[0].b: expected x")).what(),
               "f.yaml:4: top.list[0].b: expected x");
  EXPECT_STREQ(document.locate(InputError("no key here")).what(), "f.yaml: no key here");
}

TEST(YamlReaderTest, EmptyValueReadsAsAnEmptyMappingOrList) {
  YamlDocument document("m:\nl:\n", "f.yaml");
  const YamlMap root = document.root().map({"m", "l"});
  EXPECT_TRUE(root.required("m").map({"x"}).entries().empty());
  EXPECT_TRUE(root.required("l").list().empty());
  EXPECT_EQ(error_of([&] { root.required("m").number(); }),
            "f.yaml:1: m: expected a number, got nothing");
}

}  // namespace
}  // namespace gangway
