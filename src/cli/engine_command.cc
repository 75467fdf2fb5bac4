#include "cli/engine_command.h"

#include <CLI/CLI.hpp>
#include <fstream>

#include "core/input_error.h"
#include "test_engine/test_engine_server.h"

namespace gangway {

CLI::App* add_engine_command(CLI::App& app, EngineCommandOptions& options) {
  CLI::App* engine = app.add_subcommand(
      "engine",
      "Run the test engine: one model behind vLLM's HTTP API (/v1/completions, "
      "/v1/chat/completions, /v1/models, /health, /metrics, and /pause, /resume, /is_paused, "
      "which vLLM serves only with VLLM_SERVER_DEV_MODE=1 and this engine always serves), "
      "batching continuously with iterations as long as gangway's cost model says; no GPU");
  TestEngineOptions& o = options.engine;
  engine
      ->add_option("--model", o.model,
                   "A model preset (llama-3-8b, llama-3-70b, qwen2.5-7b, ...), or with "
                   "--scenario the name of one of its models")
      ->required();
  engine->add_option("--scenario", o.scenario,
                     "Take the model (shape, cost, tensor parallelism) and the GPU from this "
                     "scenario file");
  engine
      ->add_option("--hardware", o.hardware,
                   "GPU preset: h100-sxm-80gb (default), h200-sxm-141gb, a100-sxm-80gb, "
                   "b200-sxm-180gb, mi300x-192gb")
      ->each([&o](const std::string&) { o.hardware_given = true; });
  engine->add_option("--host", o.host, "Address to listen on (default 127.0.0.1)");
  engine->add_option("--port", options.port, "Port to listen on (default 8000; 0 picks one)");
  engine->add_option("--port-file", options.port_file,
                     "Write the port it listens on to this file once it does");
  engine->add_option("--gpu-memory-utilization", o.gpu_memory_utilization,
                     "Share of each GPU's memory for weights, activations and KV cache "
                     "(default 0.9)");
  engine->add_option("--tensor-parallel-size", o.tensor_parallel_size,
                     "GPUs the model is split over (default 1, or the scenario's)");
  engine->add_option("--max-num-seqs", o.max_num_seqs,
                     "Requests in the running batch at most (default 256)");
  engine->add_option("--max-num-batched-tokens", o.max_num_batched_tokens,
                     "Tokens per iteration at most; longer prompts are prefilled in chunks "
                     "(default 2048)");
  engine->add_option("--max-model-len", o.max_model_len,
                     "Prompt plus output tokens per request at most (default: the model's "
                     "context, capped by the KV cache)");
  engine->add_option("--block-size", o.block_size, "Tokens per KV block (default 16)");
  engine->add_option("--seed", o.seed,
                     "Seed of the output lengths of requests that leave them to the model "
                     "(default 0)");
  engine->footer(
      "Examples:\n"
      "  gangway engine --model llama-3-8b --port 8100\n"
      "  gangway engine --scenario examples/serve.yaml --model llama-3-70b "
      "--tensor-parallel-size 8\n"
      "docs/engines.md, \"The test engine\"");
  return engine;
}

int run_engine(EngineCommandOptions& options, std::ostream& err) {
  try {
    if (options.port < 0 || options.port > 65535) {
      throw InputError::at("", std::nullopt, "--port",
                           "expected 0 to 65535, got " + std::to_string(options.port));
    }
    options.engine.port = static_cast<int32_t>(options.port);
    const TestEngineSetup setup = resolve_test_engine_setup(options.engine);
    TestEngineServer server(setup, options.engine.host, static_cast<uint16_t>(options.port),
                            options.engine.seed, err);
    if (!options.port_file.empty()) {
      std::ofstream file(options.port_file);
      file << server.port() << "\n";
      if (!file) {
        throw InputError::at("", std::nullopt, "--port-file", "cannot write " + options.port_file);
      }
    }
    return server.run(/*handle_signals=*/true);
  } catch (const InputError& error) {
    err << "gangway engine: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    err << "gangway engine: " << error.what() << "\n";
    return 1;
  }
}

}  // namespace gangway
