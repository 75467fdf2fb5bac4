#include "model/roofline_cost_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

#include "core/node_spec.h"

namespace gangway {
namespace {

// The default node: H100 SXM, bandwidth efficiency 0.85, launch overhead 0.2 ms, MFU 0.5 for the
// 8B (TP=1) and 0.4 for the 70B (TP=8), exactly as default_node_spec() configures them.
class RooflineTest : public ::testing::Test {
 protected:
  NodeSpec node = default_node_spec();
  const ModelSpec& small = node.models[0];
  const ModelSpec& large = node.models[1];
  RooflineCostModel small_model{small, node.hardware};
  RooflineCostModel large_model{large, node.hardware};
};

BatchShape decode(int32_t seqs, int64_t context_each) {
  BatchShape b;
  b.decode_seqs = seqs;
  b.decode_context_tokens = seqs * context_each;
  return b;
}

BatchShape with_chunk(BatchShape b, int32_t chunk_tokens, int64_t chunk_context) {
  b.prefill_tokens = chunk_tokens;
  b.prefill_seqs = chunk_tokens > 0 ? 1 : 0;
  b.prefill_context_tokens = chunk_tokens > 0 ? chunk_context : 0;
  return b;
}

double ms(const RooflineCostModel& model, const BatchShape& batch) {
  return to_ms(model.iteration_time(batch));
}

// Prompt tokens per second when a prompt of `prompt_tokens` is prefilled alone, chunk by chunk.
double prefill_tokens_per_s(const CostModel& model, const ModelSpec& spec, int32_t prompt_tokens) {
  return prompt_tokens / to_seconds(prefill_time(model, spec, prompt_tokens, 0));
}

TEST_F(RooflineTest, DefaultSpecsAreTheCalibratedOnes) {
  EXPECT_EQ(small.tensor_parallel, 1);
  EXPECT_EQ(large.tensor_parallel, 8);
  EXPECT_DOUBLE_EQ(small.cost.compute_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(large.cost.compute_efficiency, 0.4);
  EXPECT_DOUBLE_EQ(small.cost.bandwidth_efficiency, 0.85);
  EXPECT_DOUBLE_EQ(small.cost.launch_overhead_s, 0.0002);
}

// Reference worked examples (eta 0.85). Tolerance 5 % unless the reference gives a range; our
// figures include the 0.2 ms launch overhead, which the worked examples leave out.
TEST_F(RooflineTest, WorkedExample8bBatch1DecodeIsAbout5_7ms) {
  EXPECT_NEAR(ms(small_model, decode(1, 512)), 5.7, 0.05 * 5.7);
}

TEST_F(RooflineTest, WorkedExample8b64SeqsAt2kContextIsAbout11_7ms) {
  EXPECT_NEAR(ms(small_model, decode(64, 2048)), 11.7, 0.05 * 11.7);
}

TEST_F(RooflineTest, WorkedExample70bTp8Batch1DecodeIs11To13msWithComm) {
  const double t = ms(large_model, decode(1, 512));
  EXPECT_GE(t, 11.0);
  EXPECT_LE(t, 13.0);
  // About 5 ms of it is the 160 all-reduces at ~33 us each.
  EXPECT_NEAR(large_model.breakdown(decode(1, 512)).tp_comm_s * 1e3, 5.3, 0.2);
}

TEST_F(RooflineTest, WorkedExample70bTp8Batch64At32kContextIsAbout41ms) {
  EXPECT_NEAR(ms(large_model, decode(64, 32768)), 41.0, 0.1 * 41.0);
}

// Every term against the formula written out by hand for one mixed 70B TP8 batch.
TEST_F(RooflineTest, BreakdownMatchesTheFormulaTermByTerm) {
  BatchShape b = with_chunk(decode(48, 3000), 384, 1000);
  const double tokens = 384 + 48;
  const double pairs = 384.0 * (1000 + 384 / 2.0) + 48.0 * 3000;
  const double flops = (2 * 70.55e9 * tokens + 4.0 * 80 * 64 * 128 * pairs) / 8;
  const double kv_bytes_per_token = 2.0 * 80 * 8 * 128 * 2;
  const double bytes = 70.55e9 * 2 / 8 + (48.0 * 3000 + 1000 + tokens) * kv_bytes_per_token / 8;
  const double comm = 2 * 80 * (33e-6 + tokens * 8192 * 2 / 210e9);

  const RooflineCostModel::Breakdown parts = large_model.breakdown(b);
  EXPECT_NEAR(parts.compute_s, flops / (989e12 * 0.4), 1e-12);
  EXPECT_NEAR(parts.memory_s, bytes / (3.35e12 * 0.85), 1e-12);
  EXPECT_NEAR(parts.tp_comm_s, comm, 1e-12);
  EXPECT_DOUBLE_EQ(parts.launch_overhead_s, 0.0002);
  EXPECT_EQ(large_model.iteration_time(b), seconds_to_duration(parts.total_s()));
}

TEST_F(RooflineTest, NoTensorParallelCommAtTp1) {
  EXPECT_EQ(small_model.breakdown(with_chunk(decode(64, 2048), 512, 0)).tp_comm_s, 0.0);
}

TEST(RooflineAttentionTest, PairsAreExactForOneChunkAndForEqualChunks) {
  BatchShape one;
  one.prefill_tokens = 512;
  one.prefill_seqs = 1;
  one.prefill_context_tokens = 1536;
  EXPECT_DOUBLE_EQ(RooflineCostModel::attended_token_pairs(one), 512.0 * (1536 + 256));

  // Three chunks of 200 tokens on contexts 0, 1000 and 5000.
  BatchShape three;
  three.prefill_tokens = 600;
  three.prefill_seqs = 3;
  three.prefill_context_tokens = 6000;
  three.decode_context_tokens = 777;
  const double exact = 200.0 * (0 + 100) + 200.0 * (1000 + 100) + 200.0 * (5000 + 100) + 777;
  EXPECT_DOUBLE_EQ(RooflineCostModel::attended_token_pairs(three), exact);
}

// Calibration against the reference ranges (SM 5-15 ms and LM 20-50 ms per decoding
// step).
//
// Typical SM step: a continuous batch of 16-128 sequences at 512-4k context whose KV fits what a
// co-located 8B replica really holds. The reference node leaves ~35-40 GB per GPU for both tiers'
// KV pools (~280k 8B tokens if the SM had it all); an SM replica sharing its GPU with the LM shard
// holds about half, so typical batches keep at most 128k context tokens (16 GiB of KV): 16-128
// x 512, 16-128 x 1k, 16-64 x 2k, 16-32 x 4k. Mixed in: nothing, or one prefill chunk of 256
// tokens, fresh or continuing a prompt of the same context. Larger batches and 512-token chunks
// are outside the range; see the KnownGap tests below and src/model/README.md.
TEST_F(RooflineTest, CalibrationSourceRangeSmTypicalStepsTake5To15ms) {
  double lowest = 1e9, highest = 0;
  for (int32_t seqs : {16, 32, 64, 128}) {
    for (int64_t context : {512, 1024, 2048, 4096}) {
      if (seqs * context > 131072) continue;
      for (int32_t chunk : {0, 256}) {
        for (int64_t chunk_context : {int64_t{0}, context}) {
          const BatchShape b = with_chunk(decode(seqs, context), chunk, chunk_context);
          const double t = ms(small_model, b);
          lowest = std::min(lowest, t);
          highest = std::max(highest, t);
          EXPECT_GE(t, 5.0) << seqs << " x " << context << " + chunk " << chunk;
          EXPECT_LE(t, 15.0) << seqs << " x " << context << " + chunk " << chunk;
        }
      }
    }
  }
  std::printf("[calibration] 8B typical SM steps: %.2f-%.2f ms\n", lowest, highest);
}

// Typical LM step: a decode batch of 32-128 at 1k-4k context (at most 21 GB of 70B KV per GPU)
// with one prefill chunk of 256-512 tokens mixed in, fresh or continuing a prompt. The reference
// range holds once prefill chunks are mixed in; pure decode of these batches takes 12-21 ms
// (checked in the next test).
TEST_F(RooflineTest, CalibrationSourceRangeLmTypicalStepsWithPrefillChunkTake20To50ms) {
  double lowest = 1e9, highest = 0;
  for (int32_t seqs : {32, 64, 128}) {
    for (int64_t context : {1024, 2048, 4096}) {
      for (int32_t chunk : {256, 512}) {
        for (int64_t chunk_context : {int64_t{0}, context}) {
          const BatchShape b = with_chunk(decode(seqs, context), chunk, chunk_context);
          const double t = ms(large_model, b);
          lowest = std::min(lowest, t);
          highest = std::max(highest, t);
          EXPECT_GE(t, 20.0) << seqs << " x " << context << " + chunk " << chunk;
          EXPECT_LE(t, 50.0) << seqs << " x " << context << " + chunk " << chunk;
        }
      }
    }
  }
  std::printf("[calibration] 70B TP8 typical LM steps with a chunk: %.2f-%.2f ms\n", lowest,
              highest);
}

TEST_F(RooflineTest, CalibrationKnownGapLmPureDecodeIsBelow20ms) {
  double lowest = 1e9, highest = 0;
  for (int32_t seqs : {32, 64, 128}) {
    for (int64_t context : {1024, 2048, 4096}) {
      const double t = ms(large_model, decode(seqs, context));
      lowest = std::min(lowest, t);
      highest = std::max(highest, t);
    }
  }
  std::printf("[calibration] 70B TP8 pure decode 32-128 x 1k-4k: %.2f-%.2f ms\n", lowest, highest);
  EXPECT_GE(lowest, 11.0);
  EXPECT_LE(highest, 22.0);
}

// Outside the SM range, by the model's own calibration: a 512-token chunk alone costs ~16 ms of
// compute at MFU 0.5 (the reference ~32k prefill tokens/s), and a batch holding ~256k context
// tokens must read ~34 GB of KV plus 16 GB of weights. Pinned so that a recalibration that
// moves them is noticed; they are known gaps (src/model/README.md), not bent into range.
TEST_F(RooflineTest, CalibrationKnownGapSmStepsWith512TokenChunkOrHugeKvExceed15ms) {
  const double with_512_chunk = ms(small_model, with_chunk(decode(32, 2048), 512, 0));
  const double huge_kv = ms(small_model, decode(128, 2048));
  std::printf("[calibration] 8B 32 x 2k + 512-token chunk: %.2f ms; 128 x 2k decode: %.2f ms\n",
              with_512_chunk, huge_kv);
  EXPECT_GT(with_512_chunk, 15.0);
  EXPECT_LT(with_512_chunk, 22.0);
  EXPECT_GT(huge_kv, 15.0);
  EXPECT_LT(huge_kv, 20.0);
}

// Reference: 8B ~32k tokens/s at 2k prompts and ~21k at 32k prompts, at 50 % MFU.
TEST_F(RooflineTest, Prefill8bThroughputAt2kPromptsIs20kTo40kTokensPerSecond) {
  const double at_2k = prefill_tokens_per_s(small_model, small, 2048);
  const double at_32k = prefill_tokens_per_s(small_model, small, 32768);
  std::printf("[calibration] 8B prefill: %.0f tokens/s at 2k, %.0f at 32k (chunk %d)\n", at_2k,
              at_32k, small.prefill_chunk_tokens);
  EXPECT_GE(at_2k, 20000.0);
  EXPECT_LE(at_2k, 40000.0);
  EXPECT_NEAR(at_32k, 21000.0, 0.15 * 21000.0);
}

// The reference gives 70B TP8 ~22-28k tokens/s "(MFU 0.35-0.45, plus ~30 ms of all-reduce per 2k
// chunk)". The compute alone at MFU 0.4 gives 22k; adding the ~31 ms of all-reduce that the
// same reference prescribes (and this model computes) gives ~16.5k with 2k chunks and ~14.6k with
// the default 512-token chunks. The reference's two halves disagree; this pins both readings
// (src/model/README.md, known gaps).
TEST_F(RooflineTest, Prefill70bTp8ThroughputComputeAloneMatchesNumbersCommCostsAThird) {
  ModelSpec big_chunks = large;
  big_chunks.prefill_chunk_tokens = 2048;
  BatchShape chunk = with_chunk(BatchShape{}, 2048, 0);
  const RooflineCostModel::Breakdown parts = large_model.breakdown(chunk);
  const double compute_only = 2048 / parts.compute_s;
  const double with_comm_2k = prefill_tokens_per_s(large_model, big_chunks, 2048);
  const double with_comm_512 = prefill_tokens_per_s(large_model, large, 2048);
  std::printf(
      "[calibration] 70B TP8 prefill at 2k: compute alone %.0f tokens/s; with comm %.0f (2k "
      "chunks), %.0f (512 chunks); all-reduce per 2k chunk %.1f ms\n",
      compute_only, with_comm_2k, with_comm_512, parts.tp_comm_s * 1e3);
  EXPECT_GE(compute_only, 20000.0);
  EXPECT_LE(compute_only, 30000.0);
  EXPECT_NEAR(parts.tp_comm_s * 1e3, 30.0, 3.0);
  EXPECT_GE(with_comm_2k, 14000.0);
  EXPECT_LE(with_comm_2k, 20000.0);
  EXPECT_LT(with_comm_512, with_comm_2k);
}

// Adding work in any dimension never makes an iteration faster, and across the sweep it makes it
// strictly slower.
void expect_monotonic(const RooflineCostModel& model, const std::string& dimension,
                      const std::function<BatchShape(int64_t)>& batch_at) {
  Duration previous = model.iteration_time(batch_at(0));
  const Duration first = previous;
  for (int64_t step = 1; step <= 64; ++step) {
    const Duration now = model.iteration_time(batch_at(step));
    EXPECT_GE(now, previous) << dimension << " step " << step;
    previous = now;
  }
  EXPECT_GT(previous, first) << dimension;
}

TEST_F(RooflineTest, MonotonicInEveryBatchDimension) {
  for (const RooflineCostModel* model : {&small_model, &large_model}) {
    expect_monotonic(*model, "decode_seqs", [](int64_t k) {
      BatchShape b = decode(static_cast<int32_t>(1 + 4 * k), 1024);
      return with_chunk(b, 128, 0);
    });
    expect_monotonic(*model, "decode_context_tokens", [](int64_t k) {
      BatchShape b = decode(32, 1024);
      b.decode_context_tokens += 4096 * k;
      return b;
    });
    expect_monotonic(*model, "prefill_tokens", [](int64_t k) {
      return with_chunk(decode(8, 2048), static_cast<int32_t>(1 + 32 * k), 1024);
    });
    expect_monotonic(*model, "prefill_context_tokens",
                     [](int64_t k) { return with_chunk(decode(8, 2048), 512, 512 * k); });
  }
}

// Small decode batches read weights and KV far faster than they compute (memory-bound); a large
// prefill chunk is the other way round (compute-bound). In between lies the crossover.
TEST_F(RooflineTest, DecodeIsMemoryBoundLargePrefillIsComputeBoundWithACrossover) {
  for (const RooflineCostModel* model : {&small_model, &large_model}) {
    EXPECT_FALSE(model->breakdown(decode(1, 512)).compute_bound());
    EXPECT_FALSE(model->breakdown(decode(256, 4096)).compute_bound());
    EXPECT_TRUE(model->breakdown(with_chunk(BatchShape{}, 2048, 0)).compute_bound());
    int32_t crossover = 0;
    for (int32_t tokens = 1; tokens <= 2048; ++tokens) {
      if (model->breakdown(with_chunk(BatchShape{}, tokens, 0)).compute_bound()) {
        crossover = tokens;
        break;
      }
    }
    // A prefill token does 2 FLOPs per parameter, i.e. 1 FLOP per bf16 weight byte read, so the
    // crossover sits near the ridge point: effective FLOP/s / effective bytes/s = 989e12 x MFU /
    // (3.35e12 x 0.85) = ~174 tokens for the 8B (MFU 0.5) and ~139 for the 70B (MFU 0.4).
    std::printf("[calibration] %s: prefill becomes compute-bound at %d tokens\n",
                model == &small_model ? "8B" : "70B TP8", crossover);
    EXPECT_GT(crossover, 100);
    EXPECT_LT(crossover, 250);
  }
}

TEST_F(RooflineTest, RejectsOutOfRangeInputsNamingTheField) {
  ModelSpec bad = small;
  bad.cost.bandwidth_efficiency = 1.2;
  try {
    RooflineCostModel model(bad, node.hardware);
    FAIL() << "accepted bandwidth_efficiency 1.2";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cost.bandwidth_efficiency"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("(0, 1]"), std::string::npos);
  }
}

}  // namespace
}  // namespace gangway
