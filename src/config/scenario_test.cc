// A scenario file with every key parses into the expected structs; left-out keys take their
// documented defaults.
#include "config/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/input_error.h"

namespace gangway {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kTraces = std::string(GANGWAY_SOURCE_DIR) + "/data/traces/";

// Every key of the format, with values that differ from the defaults where they can.
std::string full_scenario() {
  return R"(name: full
seed: 42
duration_s: 30.5
drain_s: 120
node:
  gpus: 4
  hardware:
    preset: h200-sxm-141gb
    hbm_gb: 140
    hbm_tb_per_s: 4.5
    bf16_tflops: 900
    nvlink_gb_per_s: 400
    allreduce_latency_us: 30
    allreduce_gb_per_s: 200
    pcie_gb_per_s: 55
  host_memory_gib: 512
  activation_reserve_gb: 6
  kv_block_tokens: 32
scheduler:
  large_kv_fraction: 0.6
  kv_admission_watermark: 0.05
models:
  - name: small-a
    tier: small
    shape: llama-3-8b
    gpus: [0, 1]
    tensor_parallel: 1
    max_context_tokens: 16384
    max_num_seqs: 128
    max_batched_tokens: 4096
    prefill_chunk_tokens: 1024
    cost: {model: linear, base_ms: 5, per_prefill_token_us: 60, per_decode_seq_us: 100,
           per_kv_token_ns: 2}
  - name: small-b
    tier: small
    shape: {layers: 16, hidden: 2048, q_heads: 32, kv_heads: 8, head_dim: 64, ffn: 8192,
            parameters_b: 1.24, dtype_bytes: 2}
    gpus: [2, 3]
    cost: {model: constant, iteration_ms: 7}
  - name: big
    tier: large
    shape: {preset: llama-3-70b, layers: 40}
    gpus: all
    tensor_parallel: 4
    cost: {model: roofline, compute_efficiency: 0.45, bandwidth_efficiency: 0.8,
           launch_overhead_ms: 0.5}
slo_classes:
  - {name: gold, ttft_ms: 150, tpot_ms: 40, weight: 5, rank: 0, sheddable: false,
     downgrade_to: silver}
  - {name: silver, ttft_ms: 1500, weight: 2, rank: 3}
tenants: [default, team-a]
policy:
  name: time-slice
  slice_period_ms: 100
  slice_large_share: 0.25
trace_mapping:
  - {name: cli-rows, model: small-b, class: silver, tenant: team-a, share: 0.5,
     min_prompt_tokens: 10, max_prompt_tokens: 5000, trace_model: ChatGPT}
workload:
  streams:
    - name: chat
      model: small-a
      class: gold
      tenant: team-a
      arrival: {process: gamma, rate_per_s: 100, cv: 2}
      prompt_tokens: {dist: lognormal, mean: 300, p99: 2000, min: 4, max: 8000}
      output_tokens: {dist: geometric, mean: 50}
      max_tokens: 1000
      max_prompt_tokens: 16000
      prefix: {groups: 4, group_tokens: 256, zipf_s: 1.2, pool: shared}
      sessions: {new_session_probability: 0.25, think_time_s: 3, max_active_sessions: 500}
    - name: burst
      model: big
      arrival: {process: on_off, on_rate_per_s: 20, off_rate_per_s: 1, on_s: 5, off_s: 10}
      prompt_tokens: 77
      output_tokens: {dist: empirical, values: [1, 2, 3]}
    - name: rising
      model: small-b
      arrival: {process: ramp, start_rate_per_s: 1, end_rate_per_s: 50, ramp_s: 20}
      prompt_tokens: {dist: empirical, from_trace: {path: )" +
         kTraces + R"(AzureLLMInferenceTrace_code.csv, format: azure, column: prompt}}
      output_tokens: {dist: empirical, from_trace: {path: )" +
         kTraces + R"(AzureLLMInferenceTrace_code.csv}}
)";
}

TEST(ScenarioTest, FullScenarioParsesToTheExpectedStructs) {
  const Scenario s = parse_scenario(full_scenario(), "/somewhere/full.yaml");
  EXPECT_EQ(s.name, "full");
  EXPECT_EQ(s.path, "/somewhere/full.yaml");
  EXPECT_EQ(s.seed, 42u);
  EXPECT_EQ(s.duration, milliseconds(30500));
  EXPECT_EQ(s.drain_limit, seconds(120));

  const NodeSpec& node = s.node;
  EXPECT_EQ(node.gpu_count, 4);
  EXPECT_EQ(node.hardware.name, "h200-sxm-141gb-custom");
  EXPECT_EQ(node.hardware.hbm_bytes, 140'000'000'000LL);
  EXPECT_DOUBLE_EQ(node.hardware.hbm_bytes_per_s, 4.5e12);
  EXPECT_DOUBLE_EQ(node.hardware.bf16_flops_per_s, 900e12);
  EXPECT_DOUBLE_EQ(node.hardware.nvlink_bytes_per_s, 400e9);
  EXPECT_DOUBLE_EQ(node.hardware.allreduce_latency_s, 30e-6);
  EXPECT_DOUBLE_EQ(node.hardware.allreduce_bytes_per_s, 200e9);
  EXPECT_DOUBLE_EQ(node.hardware.pcie_bytes_per_s, 55e9);
  EXPECT_EQ(node.host_memory_bytes, 512LL << 30);
  EXPECT_EQ(node.activation_reserve_bytes, 6'000'000'000LL);
  EXPECT_EQ(node.kv_block_tokens, 32);
  EXPECT_DOUBLE_EQ(s.scheduler.large_kv_fraction, 0.6);
  EXPECT_DOUBLE_EQ(s.scheduler.kv_admission_watermark, 0.05);

  ASSERT_EQ(node.models.size(), 3u);
  const ModelSpec& a = node.models[0];
  EXPECT_EQ(a.id, ModelId(0));
  EXPECT_EQ(a.name, "small-a");
  EXPECT_EQ(a.tier, ModelTier::kSmall);
  EXPECT_EQ(a.shape.name, "llama-3-8b");
  EXPECT_EQ(a.shape.layers, 32);
  EXPECT_EQ(a.gpus, (std::vector<GpuId>{GpuId(0), GpuId(1)}));
  EXPECT_EQ(a.tensor_parallel, 1);
  EXPECT_EQ(a.max_context_tokens, 16384);
  EXPECT_EQ(a.max_num_seqs, 128);
  EXPECT_EQ(a.max_batched_tokens, 4096);
  EXPECT_EQ(a.prefill_chunk_tokens, 1024);
  EXPECT_EQ(a.cost.kind, CostModelKind::kLinear);
  EXPECT_DOUBLE_EQ(a.cost.linear_base_s, 5e-3);
  EXPECT_DOUBLE_EQ(a.cost.linear_per_prefill_token_s, 60e-6);
  EXPECT_DOUBLE_EQ(a.cost.linear_per_decode_seq_s, 100e-6);
  EXPECT_DOUBLE_EQ(a.cost.linear_per_kv_token_s, 2e-9);

  const ModelSpec& b = node.models[1];
  EXPECT_EQ(b.shape.name, "small-b");
  EXPECT_EQ(b.shape.layers, 16);
  EXPECT_EQ(b.shape.hidden, 2048);
  EXPECT_EQ(b.shape.q_heads, 32);
  EXPECT_EQ(b.shape.kv_heads, 8);
  EXPECT_EQ(b.shape.head_dim, 64);
  EXPECT_EQ(b.shape.ffn, 8192);
  EXPECT_DOUBLE_EQ(b.shape.parameters, 1.24e9);
  EXPECT_EQ(b.shape.dtype_bytes, 2);
  EXPECT_EQ(b.gpus, (std::vector<GpuId>{GpuId(2), GpuId(3)}));
  EXPECT_EQ(b.cost.kind, CostModelKind::kConstant);
  EXPECT_DOUBLE_EQ(b.cost.constant_iteration_s, 7e-3);

  const ModelSpec& big = node.models[2];
  EXPECT_EQ(big.tier, ModelTier::kLarge);
  EXPECT_EQ(big.shape.name, "llama-3-70b-custom");
  EXPECT_EQ(big.shape.layers, 40);
  EXPECT_EQ(big.shape.hidden, 8192);
  EXPECT_EQ(big.tensor_parallel, 4);
  EXPECT_EQ(big.gpus.size(), 4u);
  EXPECT_EQ(big.cost.kind, CostModelKind::kRoofline);
  EXPECT_DOUBLE_EQ(big.cost.compute_efficiency, 0.45);
  EXPECT_DOUBLE_EQ(big.cost.bandwidth_efficiency, 0.8);
  EXPECT_DOUBLE_EQ(big.cost.launch_overhead_s, 0.5e-3);
  EXPECT_EQ(node.large_model(), &node.models[2]);

  ASSERT_EQ(node.slo_classes.size(), 2u);
  const SloClass& gold = node.slo_classes[0];
  EXPECT_EQ(gold.name, "gold");
  EXPECT_EQ(gold.ttft_target, milliseconds(150));
  EXPECT_EQ(gold.tpot_target, milliseconds(40));
  EXPECT_DOUBLE_EQ(gold.weight, 5);
  EXPECT_EQ(gold.rank, 0);
  EXPECT_FALSE(gold.sheddable);
  EXPECT_EQ(gold.downgrade_to, SloClassId(1));
  const SloClass& silver = node.slo_classes[1];
  EXPECT_EQ(silver.id, SloClassId(1));
  EXPECT_EQ(silver.ttft_target, milliseconds(1500));
  EXPECT_FALSE(silver.tpot_target.has_value());
  EXPECT_EQ(silver.rank, 3);
  EXPECT_TRUE(silver.sheddable);
  EXPECT_FALSE(silver.downgrade_to.has_value());

  EXPECT_EQ(s.tenants, (std::vector<std::string>{"default", "team-a"}));
  EXPECT_EQ(s.policy.name, "time-slice");
  EXPECT_EQ(s.policy.slice_period, milliseconds(100));
  EXPECT_DOUBLE_EQ(s.policy.slice_large_share, 0.25);

  ASSERT_EQ(s.trace_mapping.size(), 1u);
  const TraceMappingRule& rule = s.trace_mapping[0];
  EXPECT_EQ(rule.name, "cli-rows");
  EXPECT_EQ(rule.model, ModelId(1));
  EXPECT_EQ(rule.slo_class, SloClassId(1));
  EXPECT_EQ(rule.tenant, TenantId(1));
  EXPECT_DOUBLE_EQ(rule.share, 0.5);
  EXPECT_EQ(rule.min_prompt_tokens, 10);
  EXPECT_EQ(rule.max_prompt_tokens, 5000);
  EXPECT_EQ(rule.trace_model, "ChatGPT");

  EXPECT_FALSE(s.trace.has_value());
  ASSERT_EQ(s.streams.size(), 3u);
  const StreamSpec& chat = s.streams[0];
  EXPECT_EQ(chat.name, "chat");
  EXPECT_EQ(chat.origin, "/somewhere/full.yaml:61");
  EXPECT_EQ(chat.model, ModelId(0));
  EXPECT_EQ(chat.slo_class, SloClassId(0));
  EXPECT_EQ(chat.tenant, TenantId(1));
  EXPECT_EQ(chat.arrival.kind, ArrivalSpec::Kind::gamma);
  EXPECT_DOUBLE_EQ(chat.arrival.rate_per_s, 100);
  EXPECT_DOUBLE_EQ(chat.arrival.cv, 2);
  EXPECT_EQ(chat.prompt_tokens.kind, LengthSpec::Kind::lognormal);
  EXPECT_DOUBLE_EQ(chat.prompt_tokens.mean, 300);
  EXPECT_DOUBLE_EQ(chat.prompt_tokens.p99, 2000);
  EXPECT_EQ(chat.prompt_tokens.min, 4);
  EXPECT_EQ(chat.prompt_tokens.max, 8000);
  EXPECT_EQ(chat.output_tokens.kind, LengthSpec::Kind::geometric);
  EXPECT_DOUBLE_EQ(chat.output_tokens.mean, 50);
  EXPECT_EQ(chat.max_tokens, 1000);
  EXPECT_EQ(chat.max_prompt_tokens, 16000);
  ASSERT_TRUE(chat.prefix.has_value());
  EXPECT_EQ(chat.prefix->groups, 4);
  EXPECT_EQ(chat.prefix->group_tokens, 256);
  EXPECT_DOUBLE_EQ(chat.prefix->zipf_s, 1.2);
  EXPECT_EQ(chat.prefix->pool, "shared");
  ASSERT_TRUE(chat.sessions.has_value());
  EXPECT_DOUBLE_EQ(chat.sessions->new_session_probability, 0.25);
  EXPECT_DOUBLE_EQ(chat.sessions->think_time_s, 3);
  EXPECT_EQ(chat.sessions->max_active_sessions, 500);

  const StreamSpec& burst = s.streams[1];
  EXPECT_EQ(burst.model, ModelId(2));
  EXPECT_EQ(burst.slo_class, SloClassId(0));  // the first class
  EXPECT_EQ(burst.tenant, TenantId(0));       // the first tenant
  EXPECT_EQ(burst.arrival.kind, ArrivalSpec::Kind::on_off);
  EXPECT_DOUBLE_EQ(burst.arrival.on_rate_per_s, 20);
  EXPECT_DOUBLE_EQ(burst.arrival.off_rate_per_s, 1);
  EXPECT_DOUBLE_EQ(burst.arrival.on_s, 5);
  EXPECT_DOUBLE_EQ(burst.arrival.off_s, 10);
  EXPECT_EQ(burst.prompt_tokens.kind, LengthSpec::Kind::constant);
  EXPECT_EQ(burst.prompt_tokens.value, 77);
  EXPECT_EQ(burst.output_tokens.kind, LengthSpec::Kind::empirical);
  EXPECT_EQ(burst.output_tokens.values, (std::vector<int32_t>{1, 2, 3}));

  const StreamSpec& rising = s.streams[2];
  EXPECT_EQ(rising.arrival.kind, ArrivalSpec::Kind::ramp);
  EXPECT_DOUBLE_EQ(rising.arrival.start_rate_per_s, 1);
  EXPECT_DOUBLE_EQ(rising.arrival.end_rate_per_s, 50);
  EXPECT_DOUBLE_EQ(rising.arrival.ramp_s, 20);
  // AzureLLMInferenceTrace_code.csv: a header and 8,819 rows; the first row is
  // 2023-11-16 18:17:03.9799600,4808,10.
  EXPECT_EQ(rising.prompt_tokens.kind, LengthSpec::Kind::empirical);
  ASSERT_EQ(rising.prompt_tokens.values.size(), 8819u);
  EXPECT_EQ(rising.prompt_tokens.values.front(), 4808);
  ASSERT_EQ(rising.output_tokens.values.size(), 8819u);
  EXPECT_EQ(rising.output_tokens.values.front(), 10);
}

TEST(ScenarioTest, LeftOutKeysTakeTheDefaults) {
  const Scenario s = parse_scenario(R"(models:
  - {name: llama-3-8b, tier: small}
  - {name: llama-3-70b, tier: large}
workload:
  streams:
    - {name: chat, model: llama-3-8b, arrival: {rate_per_s: 10}}
)",
                                    "dir/minimal.yaml");
  EXPECT_EQ(s.name, "minimal");  // the file stem
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.duration, seconds(60));
  EXPECT_EQ(s.drain_limit, seconds(600));

  // The node matches default_node_spec() where the file says nothing.
  const NodeSpec expected = default_node_spec();
  const NodeSpec& node = s.node;
  EXPECT_EQ(node.gpu_count, 8);
  EXPECT_EQ(node.hardware.name, "h100-sxm-80gb");
  EXPECT_EQ(node.hardware.hbm_bytes, expected.hardware.hbm_bytes);
  EXPECT_EQ(node.host_memory_bytes, expected.host_memory_bytes);
  EXPECT_EQ(node.activation_reserve_bytes, expected.activation_reserve_bytes);
  EXPECT_EQ(node.kv_block_tokens, 16);
  ASSERT_EQ(node.models.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const ModelSpec& model = node.models[i];
    const ModelSpec& want = expected.models[i];
    EXPECT_EQ(model.name, want.name);
    EXPECT_EQ(model.tier, want.tier);
    EXPECT_EQ(model.shape.name, want.shape.name);
    EXPECT_EQ(model.shape.layers, want.shape.layers);
    EXPECT_EQ(model.gpus, want.gpus);
    EXPECT_EQ(model.tensor_parallel, want.tensor_parallel);
    EXPECT_EQ(model.max_context_tokens, want.max_context_tokens);
    EXPECT_EQ(model.max_num_seqs, want.max_num_seqs);
    EXPECT_EQ(model.max_batched_tokens, want.max_batched_tokens);
    EXPECT_EQ(model.prefill_chunk_tokens, want.prefill_chunk_tokens);
    EXPECT_EQ(model.cost.kind, want.cost.kind);
    EXPECT_DOUBLE_EQ(model.cost.compute_efficiency, want.cost.compute_efficiency);
    EXPECT_DOUBLE_EQ(model.cost.bandwidth_efficiency, want.cost.bandwidth_efficiency);
    EXPECT_DOUBLE_EQ(model.cost.launch_overhead_s, want.cost.launch_overhead_s);
  }
  ASSERT_EQ(node.slo_classes.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(node.slo_classes[i].name, expected.slo_classes[i].name);
    EXPECT_EQ(node.slo_classes[i].ttft_target, expected.slo_classes[i].ttft_target);
    EXPECT_EQ(node.slo_classes[i].rank, expected.slo_classes[i].rank);
    EXPECT_EQ(node.slo_classes[i].downgrade_to, expected.slo_classes[i].downgrade_to);
  }
  EXPECT_DOUBLE_EQ(s.scheduler.large_kv_fraction, SchedulerOptions().large_kv_fraction);
  EXPECT_DOUBLE_EQ(s.scheduler.kv_admission_watermark, SchedulerOptions().kv_admission_watermark);
  EXPECT_EQ(s.policy.name, "gangway");  // default_policy_spec(): lease mode
  EXPECT_EQ(s.policy.mode, ExecutionMode::kLease);
  EXPECT_EQ(s.tenants, std::vector<std::string>{"default"});

  ASSERT_EQ(s.trace_mapping.size(), 1u);  // every row to the first small model
  EXPECT_EQ(s.trace_mapping[0].model, ModelId(0));
  EXPECT_EQ(s.trace_mapping[0].slo_class, SloClassId(0));
  EXPECT_DOUBLE_EQ(s.trace_mapping[0].share, 1.0);

  ASSERT_EQ(s.streams.size(), 1u);
  const StreamSpec& chat = s.streams[0];
  EXPECT_EQ(chat.origin, "dir/minimal.yaml:6");
  EXPECT_EQ(chat.slo_class, SloClassId(0));
  EXPECT_EQ(chat.tenant, TenantId(0));
  EXPECT_EQ(chat.arrival.kind, ArrivalSpec::Kind::poisson);
  EXPECT_DOUBLE_EQ(chat.arrival.rate_per_s, 10);
  EXPECT_EQ(chat.prompt_tokens.kind, LengthSpec::Kind::constant);
  EXPECT_EQ(chat.prompt_tokens.value, 1);
  EXPECT_EQ(chat.max_tokens, 4096);
  EXPECT_EQ(chat.max_prompt_tokens, 32768);
  EXPECT_FALSE(chat.prefix.has_value());
  EXPECT_FALSE(chat.sessions.has_value());
}

TEST(ScenarioTest, SmallOnlyNodeAndModelOrderAreFree) {
  const Scenario s = parse_scenario(R"(node: {gpus: 2, hardware: h200-sxm-141gb}
models:
  - {name: b, tier: small, shape: llama-3-8b, gpus: [1]}
  - {name: a, tier: small, shape: llama-3-8b, gpus: [0, 1]}
workload:
  streams: [{name: x, model: a, arrival: {rate_per_s: 1}}]
)",
                                    "");
  EXPECT_EQ(s.name, "scenario");
  EXPECT_EQ(s.node.hardware.name, "h200-sxm-141gb");
  EXPECT_EQ(s.node.large_model(), nullptr);
  EXPECT_EQ(s.streams[0].model, ModelId(1));
}

TEST(ScenarioTest, TraceWorkloadResolvesItsPathBesideTheScenarioFile) {
  const std::string path = std::string(GANGWAY_SOURCE_DIR) + "/examples/some-scenario.yaml";
  const Scenario s = parse_scenario(R"(models:
  - {name: llama-3-8b, tier: small}
  - {name: llama-3-70b, tier: large}
trace_mapping: [{model: llama-3-70b}]
workload:
  trace:
    path: ../data/traces/mooncake_conversation_trace.jsonl
    format: mooncake
    rate_scale: 2
    start_s: 10
    end_s: 70
    max_tokens: {fixed: 1024}
    spread_equal_timestamps: false
)",
                                    path);
  EXPECT_TRUE(s.streams.empty());
  ASSERT_TRUE(s.trace.has_value());
  const TraceSpec& trace = *s.trace;
  EXPECT_EQ(trace.path, kTraces + "mooncake_conversation_trace.jsonl");
  EXPECT_EQ(trace.origin, path + ":6");
  EXPECT_EQ(trace.format, TraceFormat::mooncake);
  EXPECT_DOUBLE_EQ(trace.rate_scale, 2);
  EXPECT_EQ(trace.start_s, 10.0);
  EXPECT_EQ(trace.end_s, 70.0);
  EXPECT_EQ(trace.max_tokens.kind, TraceMaxTokens::Kind::fixed);
  EXPECT_EQ(trace.max_tokens.tokens, 1024);
  EXPECT_EQ(trace.spread_equal_timestamps, false);
  // Without its own mapping the trace uses the scenario's trace_mapping.
  ASSERT_EQ(trace.rules.size(), 1u);
  EXPECT_EQ(trace.rules[0].model, ModelId(1));
}

TEST(ScenarioTest, TraceWithoutAnyMappingGoesToTheFirstSmallModel) {
  const Scenario s = parse_scenario(R"(models:
  - {name: llama-3-70b, tier: large}
  - {name: llama-3-8b, tier: small}
workload:
  trace: {path: )" + kTraces + R"(AzureLLMInferenceTrace_conv.csv}
)",
                                    "t.yaml");
  ASSERT_TRUE(s.trace.has_value());
  EXPECT_EQ(s.trace->format, TraceFormat::azure);
  EXPECT_FALSE(s.trace->spread_equal_timestamps.has_value());
  EXPECT_EQ(s.trace->max_tokens.kind, TraceMaxTokens::Kind::at_least_output);
  ASSERT_EQ(s.trace->rules.size(), 1u);
  EXPECT_EQ(s.trace->rules[0].model, ModelId(1));
}

TEST(ScenarioTest, PolicyMayBeJustAName) {
  const Scenario s = parse_scenario(R"(models: [{name: llama-3-8b, tier: small}]
policy: sm-first
workload: {streams: [{name: x, model: llama-3-8b, arrival: {rate_per_s: 1}}]}
)",
                                    "p.yaml");
  EXPECT_EQ(s.policy.name, "sm-first");
}

TEST(ScenarioTest, LoadScenarioReadsTheFile) {
  const Scenario s = load_scenario(std::string(GANGWAY_SOURCE_DIR) + "/examples/peak-mixed.yaml");
  EXPECT_EQ(s.name, "peak-mixed");
}

TEST(ScenarioTest, LoadScenarioOfAMissingFileIsAnInputError) {
  try {
    load_scenario("/nonexistent/scenario.yaml");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("/nonexistent/scenario.yaml: cannot open"));
  }
}

}  // namespace
}  // namespace gangway
