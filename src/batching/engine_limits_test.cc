#include "batching/engine_limits.h"

#include <gtest/gtest.h>

#include "batching/seeded_output_length.h"
#include "core/input_error.h"

namespace gangway {
namespace {

ModelSpec llama_8b() {
  ModelSpec model;
  model.name = "llama-3-8b";
  model.shape = llama3_8b_shape();
  return model;
}

HardwareSpec gpu_80gb() {
  HardwareSpec hardware;
  hardware.name = "test-80gb";
  hardware.hbm_bytes = 80LL * 1000 * 1000 * 1000;
  return hardware;
}

TEST(KvBlocksForMemoryShare, IsWhatTheShareLeavesAfterWeightsAndReserve) {
  const ModelSpec model = llama_8b();
  const int64_t blocks = kv_blocks_for_memory_share(model, gpu_80gb(), 0.9, 4'000'000'000, 16);
  const double kv_bytes = 72e9 - model.weight_bytes_per_gpu() - 4e9;
  const double expected = kv_bytes / (model.kv_bytes_per_token_per_gpu() * 16.0);
  EXPECT_NEAR(static_cast<double>(blocks), expected, 1.0);
  EXPECT_LT(kv_blocks_for_memory_share(model, gpu_80gb(), 0.5, 4'000'000'000, 16), blocks);
}

TEST(KvBlocksForMemoryShare, NamesTheFlagWhenNothingIsLeft) {
  EXPECT_THROW(kv_blocks_for_memory_share(llama_8b(), gpu_80gb(), 0.1, 4'000'000'000, 16),
               InputError);
  EXPECT_THROW(kv_blocks_for_memory_share(llama_8b(), gpu_80gb(), 1.5, 0, 16), InputError);
}

TEST(SeededOutputLength, IsReproducibleAndWithinItsCap) {
  const SeededOutputLength lengths(7);
  const SeededOutputLength same(7);
  bool all_equal_to_first = true;
  for (uint64_t index = 0; index < 100; ++index) {
    const int32_t length = lengths.draw(index, 40);
    EXPECT_GE(length, 1);
    EXPECT_LE(length, 40);
    EXPECT_EQ(length, same.draw(index, 40));
    all_equal_to_first = all_equal_to_first && length == lengths.draw(0, 40);
  }
  EXPECT_FALSE(all_equal_to_first);
  EXPECT_EQ(lengths.draw(3, 1), 1);
}

}  // namespace
}  // namespace gangway
