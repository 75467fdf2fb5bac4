// The tokenizer stand-in: 4 bytes a token, chained block hashes that are equal exactly where the
// text is, and synthesized prompts that read back as the workload's lengths and block structure.
#include "engine/emulated_tokenizer.h"

#include <gtest/gtest.h>

#include <set>

namespace gangway {
namespace {

std::vector<BlockHash> hashes(std::string_view text, int32_t block_tokens = 4) {
  std::vector<BlockHash> out;
  append_emulated_block_hashes(text, block_tokens, out);
  return out;
}

TEST(EmulatedTokenizerTest, FourBytesATokenRoundedUp) {
  EXPECT_EQ(count_emulated_tokens(""), 0);
  EXPECT_EQ(count_emulated_tokens("a"), 1);
  EXPECT_EQ(count_emulated_tokens("abcd"), 1);
  EXPECT_EQ(count_emulated_tokens("abcde"), 2);
  EXPECT_EQ(count_emulated_tokens(std::string(4000, 'x')), 1000);
}

TEST(EmulatedTokenizerTest, OnlyFullBlocksAreHashed) {
  // 4-token blocks are 16 bytes.
  EXPECT_TRUE(hashes(std::string(15, 'a')).empty());
  EXPECT_EQ(hashes(std::string(16, 'a')).size(), 1u);
  EXPECT_EQ(hashes(std::string(47, 'a')).size(), 2u);
}

TEST(EmulatedTokenizerTest, SharedPrefixesShareHashesUpToWhereTheyDiffer) {
  const std::string system_prompt(64, 's');  // 4 blocks
  const auto a = hashes(system_prompt + "question one, asked in full here");
  const auto b = hashes(system_prompt + "another question asked, in full ");
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(b.size(), 6u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(a[i], b[i]) << i;
  EXPECT_NE(a[4], b[4]);
  EXPECT_NE(a[5], b[5]);
  // A block's hash covers what comes before it: equal text after a different start differs.
  const auto c = hashes(std::string(16, 'x') + std::string(48, 's'));
  EXPECT_NE(c[1], a[1]);
}

TEST(EmulatedTokenizerTest, SynthesizedPromptsReadBackAsTheWorkloadSees) {
  const int32_t block_tokens = 16;
  // Two requests sharing their first two blocks, then different; odd lengths.
  const std::vector<BlockHash> first = {11, 22, 33};
  const std::vector<BlockHash> second = {11, 22, 44, 55};
  const std::string a = synthesize_prompt_text(first, 57, /*unique_salt=*/1, block_tokens);
  const std::string b = synthesize_prompt_text(second, 70, /*unique_salt=*/2, block_tokens);
  EXPECT_EQ(count_emulated_tokens(a), 57);
  EXPECT_EQ(count_emulated_tokens(b), 70);
  const auto ha = hashes(a, block_tokens);
  const auto hb = hashes(b, block_tokens);
  ASSERT_EQ(ha.size(), 3u);
  ASSERT_EQ(hb.size(), 4u);
  EXPECT_EQ(ha[0], hb[0]);
  EXPECT_EQ(ha[1], hb[1]);
  EXPECT_NE(ha[2], hb[2]);
  // Text the workload did not hash is unique to the request.
  const std::string c = synthesize_prompt_text({}, 40, 3, block_tokens);
  const std::string d = synthesize_prompt_text({}, 40, 4, block_tokens);
  EXPECT_NE(hashes(c, block_tokens)[0], hashes(d, block_tokens)[0]);
  for (char ch : a) EXPECT_TRUE((ch >= 'a' && ch <= 'z') || ch == ' ' || (ch >= '0' && ch <= '4'));
}

TEST(EmulatedTokenizerTest, GeneratedTokensAreFourBytesEach) {
  std::set<std::string_view> words;
  for (int32_t i = 0; i < 64; ++i) {
    EXPECT_EQ(emulated_token_text(i).size(), 4u);
    words.insert(emulated_token_text(i));
  }
  EXPECT_GT(words.size(), 8u);
}

}  // namespace
}  // namespace gangway
