#include "cli/load_command.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/run_warnings.h"
#include "cli/server_probe.h"
#include "cli/simulation_table.h"
#include "cli/text_table.h"
#include "client/load_generator.h"
#include "config/scenario.h"
#include "config/scenario_source.h"
#include "core/input_error.h"

namespace gangway {
namespace {

void apply_load_overrides(const LoadCommandOptions& options, Scenario& scenario) {
  apply_workload_overrides(options, scenario);
  if (options.endpoint != "completions" && options.endpoint != "chat") {
    throw InputError::at("", std::nullopt, "--endpoint",
                         "expected completions or chat, got '" + options.endpoint + "'");
  }
}

// Open-loop load needs a socket per request in flight: lift the soft descriptor limit.
void raise_open_file_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

nlohmann::json histogram_json(const StreamingHistogram& histogram) {
  return histogram_summary_json(histogram);
}

nlohmann::json load_json(const Scenario& scenario, const LoadCommandOptions& options,
                         const LoadResult& result) {
  nlohmann::json errors = nlohmann::json::object();
  for (const auto& [what, count] : result.transport_errors) errors[what] = count;
  nlohmann::json statuses = nlohmann::json::object();
  for (const auto& [status, count] : result.http_status) statuses[std::to_string(status)] = count;
  const nlohmann::json load = {
      {"url", options.url},
      {"endpoint", options.endpoint},
      {"measured_s", result.window_s},
      {"wall_s", result.wall_s},
      {"sent", result.sent},
      {"sent_rps", result.window_s > 0 ? result.sent / result.window_s : 0},
      {"peak_connections", result.peak_connections},
      {"send_lag_ms", histogram_json(result.send_lag_ms)},
      {"engine_ttft_ms", histogram_json(result.engine_ttft_ms)},
      {"server_added_ttft_ms", histogram_json(result.server_added_ttft_ms)},
      {"http_status", statuses},
      {"transport_errors", errors}};
  const nlohmann::json run = {{"policy", scenario.policy.name},
                              {"mode", "real-time"},
                              {"load", load},
                              {"classes", result.metrics.classes_json(result.window_s)},
                              {"models", result.metrics.models_json(result.window_s)},
                              {"total", result.metrics.total_json(result.window_s)}};
  return {{"gangway_version", GANGWAY_VERSION},
          {"scenario", scenario.name},
          {"seed", scenario.seed},
          {"runs", nlohmann::json::array({run})}};
}

std::optional<double> client_percentile(const StreamingHistogram& histogram, double q) {
  if (histogram.count() == 0) return std::nullopt;
  return histogram.quantile(q);
}

void print_table(std::ostream& out, const Scenario& scenario, const LoadCommandOptions& options,
                 const LoadResult& result) {
  out << fmt::format(
      "gangway load  scenario {}  url {}\n{}  sent {} ({:.1f}/s)  wall {:.1f} s\n\n", scenario.name,
      options.url, measured_window_text(result.window_s, to_seconds(scenario.warmup)), result.sent,
      result.window_s > 0 ? result.sent / result.window_s : 0.0, result.wall_s);
  TextTable table({"group", "arrived", "done", "rejected", "other", "SLO", "goodput/s", "TTFT p50",
                   "TTFT p99", "TPOT p50", "TPOT p99", "e2e p99"});
  auto row = [&](const std::string& label, const RequestStats& stats) {
    if (stats.arrived() == 0) return;
    const std::optional<double> attainment =
        static_cast<double>(stats.slo_met()) / static_cast<double>(stats.arrived());
    table.add_row(
        {label, std::to_string(stats.arrived()), std::to_string(stats.completed()),
         std::to_string(stats.rejected()), std::to_string(stats.failed() + stats.cancelled()),
         percent_or_dash(attainment),
         result.window_s > 0
             ? fmt::format("{:.1f}", static_cast<double>(stats.slo_met()) / result.window_s)
             : "-",
         dash_or(client_percentile(stats.ttft_ms(), 0.5), 1),
         dash_or(client_percentile(stats.ttft_ms(), 0.99), 1),
         dash_or(client_percentile(stats.tpot_ms(), 0.5), 1),
         dash_or(client_percentile(stats.tpot_ms(), 0.99), 1),
         dash_or(client_percentile(stats.e2e_ms(), 0.99), 0)});
  };
  const RunMetrics& metrics = result.metrics;
  for (const SloClass& slo : scenario.node.slo_classes) {
    row("class " + slo.name, metrics.slo_class(slo.id));
  }
  for (const ModelSpec& model : scenario.node.models) {
    row("model " + model.name, metrics.model(model.id));
  }
  row("total", metrics.total());
  table.print(out);
  out << "(latencies in ms, from the client; other: failed or cancelled; SLO: requests meeting "
         "their class targets / arrived; \"-\": no data)\n";
  std::vector<std::string> reasons;
  for (int r = 1; r < kReasonCount; ++r) {
    const auto reason = static_cast<Reason>(r);
    if (const uint64_t count = metrics.total().count_with_reason(reason)) {
      reasons.push_back(fmt::format("{} {}", to_string(reason), count));
    }
  }
  print_wrapped(out, "not completed", reasons);
  const StreamingHistogram& added = result.server_added_ttft_ms;
  out << fmt::format(
      "\nserver-added TTFT (client TTFT - engine share), ms: p50 {}  p90 {}  p99 {}  max {}  "
      "({} requests)\n",
      dash_or(client_percentile(added, 0.5), 2), dash_or(client_percentile(added, 0.9), 2),
      dash_or(client_percentile(added, 0.99), 2), dash_or(client_percentile(added, 1.0), 2),
      added.count());
  out << fmt::format("send lag (open-loop accuracy), ms: p50 {}  p99 {}  max {}\n",
                     dash_or(client_percentile(result.send_lag_ms, 0.5), 2),
                     dash_or(client_percentile(result.send_lag_ms, 0.99), 2),
                     dash_or(client_percentile(result.send_lag_ms, 1.0), 2));
  std::vector<std::string> statuses;
  for (const auto& [status, count] : result.http_status) {
    statuses.push_back(fmt::format("{} x {}", status, count));
  }
  print_wrapped(out, "HTTP status", statuses);
  for (const auto& [what, count] : result.transport_errors) {
    out << fmt::format("transport errors: {} x {}\n", count, what);
  }
}

}  // namespace

CLI::App* add_load_command(CLI::App& app, LoadCommandOptions& options) {
  CLI::App* command = app.add_subcommand(
      "load",
      "Send a scenario's workload to a running server, open loop and streaming, and measure "
      "TTFT, TPOT and end-to-end latency per SLO class and model from the client side");
  command->add_option("--url", options.url, "The server, e.g. http://127.0.0.1:8000")->required();
  command
      ->add_option("scenario", options.scenario_path,
                   "Scenario YAML whose workload (streams or trace) to send")
      ->required();
  add_set_option(*command, options.settings);
  command->add_option("--rate-scale", options.rate_scale,
                      "Multiply every arrival rate (trace replay: compress time) by this factor");
  command->add_option("--duration", options.duration_s, "Arrival window in seconds");
  command->add_option("--seed", options.seed, "Override the scenario's seed");
  command->add_option("--trace", options.trace_path, "Replay this trace instead of the workload");
  command->add_option("--trace-format", options.trace_format, "azure, mooncake or burstgpt");
  command->add_option("--endpoint", options.endpoint,
                      "completions (/v1/completions, default) or chat (/v1/chat/completions)");
  command->add_option("--drain-timeout", options.drain_timeout_s,
                      "Seconds to wait for answers after the last arrival (default: the "
                      "scenario's drain_s, at most 120)");
  command->add_option("--max-connections", options.max_connections,
                      "Most connections open at once (default 16384)");
  command->add_flag("--json", options.json, "Print exactly one JSON document on stdout");
  command->add_flag("--no-progress", options.no_progress, "No progress line on a terminal");
  command->footer(
      "Example:\n"
      "  gangway load --url http://127.0.0.1:8000 examples/serve.yaml --duration 10 \\\n"
      "      --set workload.streams[sm-chat].arrival.rate_per_s=100");
  return command;
}

int run_load(const LoadCommandOptions& options, std::ostream& out, std::ostream& err) {
  Scenario scenario;
  LoadOptions load;
  std::unique_ptr<RequestSource> source;
  try {
    scenario = load_scenario_with_settings(options.scenario_path, options.settings);
    apply_load_overrides(options, scenario);
    load.target = parse_load_url(options.url);
    load.endpoint =
        options.endpoint == "chat" ? Endpoint::kChatCompletions : Endpoint::kCompletions;
    load.duration = scenario.duration;
    load.warmup = scenario.warmup;
    load.drain_timeout = options.drain_timeout_s
                             ? seconds_to_duration(std::max(0.0, *options.drain_timeout_s))
                             : std::min<Duration>(scenario.drain_limit, std::chrono::seconds(120));
    if (options.max_connections < 1) {
      throw InputError::at("", std::nullopt, "--max-connections", "expected at least 1");
    }
    load.max_connections = options.max_connections;
    source = make_request_source(scenario);
  } catch (const InputError& error) {
    err << "gangway: error: " << error.what() << "\n";
    return 2;
  }
  // A server that is not there is reported now, not after the whole arrival window.
  if (const std::optional<std::string> why = probe_server(load.target, std::chrono::seconds(3))) {
    err << "gangway: error: cannot connect to " << options.url << ": " << *why
        << " (is `gangway serve` or another server running there?)\n";
    return 1;
  }
  raise_open_file_limit();
  if (!options.no_progress && isatty(STDERR_FILENO)) load.progress = &err;
  LoadResult result = [&] {
    LoadGenerator generator(scenario, *source, load);
    return generator.run();
  }();
  warn_about_models_without_traffic(scenario, result.metrics, err);
  if (options.json) {
    out << load_json(scenario, options, result).dump() << "\n";
  } else {
    print_table(out, scenario, options, result);
  }
  const bool nothing_reached =
      result.sent > 0 && result.http_status.empty() && !result.transport_errors.empty();
  if (nothing_reached) {
    err << "gangway: error: no answer from " << options.url << ": "
        << result.transport_errors.begin()->first << "\n";
    return 1;
  }
  return 0;
}

}  // namespace gangway
