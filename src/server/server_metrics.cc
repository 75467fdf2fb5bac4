#include "server/server_metrics.h"

#include <fmt/format.h>

#include <algorithm>

namespace gangway {
namespace {

// vLLM's bucket bounds (vllm/engine/metrics.py and v1/metrics/loggers.py).
const std::vector<double> kTtftBounds = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                         0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                         20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
const std::vector<double> kTpotBounds = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                         0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
const std::vector<double> kLatencyBounds = {0.3,  0.5,   0.8,   1.0,   1.5,   2.0,    2.5,
                                            5.0,  10.0,  15.0,  20.0,  30.0,  40.0,   50.0,
                                            60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};

constexpr size_t kOutcomes = 4;

std::string label_value(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out.append("\\n");
      continue;
    }
    out.push_back(c);
  }
  return out;
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

std::string number(double value) {
  return fmt::format("{}", value);
}

}  // namespace

PrometheusHistogram::PrometheusHistogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void PrometheusHistogram::observe(double value) {
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);
  ++counts_[static_cast<size_t>(it - bounds_.begin())];
  sum_ += value;
  ++count_;
}

void PrometheusHistogram::render(std::string& out, const std::string& name,
                                 const std::string& labels) const {
  uint64_t cumulative = 0;
  const std::string sep = labels.empty() ? "" : ",";
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    fmt::format_to(std::back_inserter(out), "{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep,
                   number(bounds_[i]), cumulative);
  }
  cumulative += counts_.back();
  fmt::format_to(std::back_inserter(out), "{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, sep,
                 cumulative);
  fmt::format_to(std::back_inserter(out), "{}_sum{{{}}} {}\n{}_count{{{}}} {}\n", name, labels,
                 number(sum_), name, labels, count_);
}

ServerMetrics::ServerMetrics(const NodeSpec& node) : node_(node) {
  const size_t models = node.models.size();
  const size_t classes = node.slo_classes.size();
  finished_.assign(models * classes * kOutcomes * kReasonCount, 0);
  arrived_.assign(models * classes, 0);
  slo_met_.assign(models * classes, 0);
  prompt_tokens_.assign(models, 0);
  generation_tokens_.assign(models, 0);
  success_stop_.assign(models, 0);
  success_length_.assign(models, 0);
  for (size_t m = 0; m < models; ++m) {
    ttft_.emplace_back(kTtftBounds);
    inter_token_.emplace_back(kTpotBounds);
    e2e_.emplace_back(kLatencyBounds);
    queue_.emplace_back(kLatencyBounds);
    for (size_t c = 0; c < classes; ++c) class_ttft_.emplace_back(kTtftBounds);
  }
}

void ServerMetrics::on_arrival(ModelId model, SloClassId slo_class) {
  ++arrived_[model.value() * node_.slo_classes.size() + slo_class.value()];
}

size_t ServerMetrics::request_index(const RequestRecord& record) const {
  const size_t pair = record.model.value() * node_.slo_classes.size() + record.slo_class.value();
  return (pair * kOutcomes + static_cast<size_t>(record.outcome)) * kReasonCount +
         static_cast<size_t>(record.reason);
}

void ServerMetrics::on_finished(const RequestRecord& record, bool hit_max_tokens) {
  ++finished_[request_index(record)];
  const size_t m = record.model.value();
  const size_t pair = m * node_.slo_classes.size() + record.slo_class.value();
  if (record.outcome == Outcome::kCompleted && record.slo_met) ++slo_met_[pair];
  if (record.first_scheduled) prompt_tokens_[m] += static_cast<uint64_t>(record.prompt_tokens);
  if (const auto ttft = record.ttft()) {
    ttft_[m].observe(to_seconds(*ttft));
    class_ttft_[pair].observe(to_seconds(*ttft));
  }
  if (const auto queue = record.queue_delay()) queue_[m].observe(to_seconds(*queue));
  if (record.outcome == Outcome::kCompleted) {
    e2e_[m].observe(to_seconds(record.e2e()));
    ++(hit_max_tokens ? success_length_ : success_stop_)[m];
  }
}

std::string ServerMetrics::render(const LoadReport& load, const HttpCounters& http,
                                  const LoopCounters& loop, bool draining,
                                  int64_t gang_phases) const {
  std::string out;
  out.reserve(32 * 1024);
  auto it = std::back_inserter(out);
  const size_t classes = node_.slo_classes.size();
  std::vector<std::string> model_label;
  for (const ModelSpec& model : node_.models) {
    model_label.push_back("model_name=\"" + label_value(model.name) + "\"");
  }
  // One sample per model, under vLLM's label: value(m) for m < count.
  const auto per_model = [&](const char* name, size_t count, const auto& value) {
    for (size_t m = 0; m < count; ++m) {
      fmt::format_to(it, "{}{{{}}} {}\n", name, model_label[m], value(m));
    }
  };
  // One sample per (model, SLO class) of the node, from a [model][class] table.
  const auto per_model_and_class = [&](const char* name, const std::vector<uint64_t>& table) {
    for (const ModelSpec& model : node_.models) {
      for (const SloClass& slo : node_.slo_classes) {
        fmt::format_to(it, "{}{{model=\"{}\",slo_class=\"{}\"}} {}\n", name,
                       label_value(model.name), label_value(slo.name),
                       table[model.id.value() * classes + slo.id.value()]);
      }
    }
  };
  // One sample per (model, SLO class) of the load report.
  const auto per_class_load = [&](const char* name, int64_t ClassLoad::*field) {
    for (const ModelLoad& model : load.models) {
      for (const ClassLoad& c : model.classes) {
        fmt::format_to(it, "{}{{model=\"{}\",slo_class=\"{}\"}} {}\n", name,
                       label_value(model.model), label_value(c.slo_class), c.*field);
      }
    }
  };
  // A metric with one sample and no labels.
  const auto single = [&](const char* name, const char* type, const char* help, const auto& value) {
    header(out, name, type, help);
    fmt::format_to(it, "{} {}\n", name, value);
  };

  // --- vLLM's names -------------------------------------------------------------------------
  header(out, "vllm:num_requests_running", "gauge",
         "Number of requests in model execution batches.");
  per_model("vllm:num_requests_running", load.models.size(),
            [&](size_t m) { return load.models[m].running; });
  header(out, "vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.");
  per_model("vllm:num_requests_waiting", load.models.size(),
            [&](size_t m) { return load.models[m].queued; });
  for (const char* name : {"vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"}) {
    header(out, name, "gauge", "KV-cache usage. 1 means 100 percent usage.");
    per_model(name, load.models.size(), [&](size_t m) { return number(load.models[m].kv_usage); });
  }
  header(out, "vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.");
  per_model("vllm:prompt_tokens_total", model_label.size(),
            [&](size_t m) { return prompt_tokens_[m]; });
  header(out, "vllm:generation_tokens_total", "counter", "Number of generation tokens processed.");
  per_model("vllm:generation_tokens_total", model_label.size(),
            [&](size_t m) { return generation_tokens_[m]; });
  header(out, "vllm:request_success_total", "counter", "Count of successfully processed requests.");
  for (size_t m = 0; m < model_label.size(); ++m) {
    fmt::format_to(it, "vllm:request_success_total{{{},finished_reason=\"stop\"}} {}\n",
                   model_label[m], success_stop_[m]);
    fmt::format_to(it, "vllm:request_success_total{{{},finished_reason=\"length\"}} {}\n",
                   model_label[m], success_length_[m]);
  }
  struct Family {
    const char* name;
    const char* help;
    const std::vector<PrometheusHistogram>* histograms;
  };
  for (const Family& family :
       {Family{"vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
               &ttft_},
        Family{"vllm:time_per_output_token_seconds",
               "Histogram of time per output token in seconds.", &inter_token_},
        Family{"vllm:e2e_request_latency_seconds",
               "Histogram of end to end request latency in seconds.", &e2e_},
        Family{"vllm:request_queue_time_seconds",
               "Histogram of time spent in WAITING phase for request.", &queue_}}) {
    header(out, family.name, "histogram", family.help);
    for (size_t m = 0; m < model_label.size(); ++m) {
      (*family.histograms)[m].render(out, family.name, model_label[m]);
    }
  }

  // --- gangway's own --------------------------------------------------------------------------
  header(out, "gangway_requests_arrived_total", "counter",
         "Requests handed to the scheduler, by model and SLO class.");
  per_model_and_class("gangway_requests_arrived_total", arrived_);
  header(out, "gangway_requests_finished_total", "counter",
         "Requests that ended, by model, SLO class, outcome and reason (each exactly once).");
  for (const ModelSpec& model : node_.models) {
    for (const SloClass& slo : node_.slo_classes) {
      const size_t pair = model.id.value() * classes + slo.id.value();
      for (size_t o = 0; o < kOutcomes; ++o) {
        for (int r = 0; r < kReasonCount; ++r) {
          const uint64_t n = finished_[(pair * kOutcomes + o) * kReasonCount + r];
          if (n == 0) continue;
          fmt::format_to(it,
                         "gangway_requests_finished_total{{model=\"{}\",slo_class=\"{}\","
                         "outcome=\"{}\",reason=\"{}\"}} {}\n",
                         label_value(model.name), label_value(slo.name),
                         to_string(static_cast<Outcome>(o)), to_string(static_cast<Reason>(r)), n);
        }
      }
    }
  }
  header(out, "gangway_requests_slo_met_total", "counter",
         "Completed requests that met their SLO class's targets.");
  per_model_and_class("gangway_requests_slo_met_total", slo_met_);
  header(out, "gangway_requests_queued", "gauge", "Requests waiting, by model and SLO class.");
  per_class_load("gangway_requests_queued", &ClassLoad::queued);
  header(out, "gangway_requests_running", "gauge",
         "Requests resident on an engine, by model and SLO class.");
  per_class_load("gangway_requests_running", &ClassLoad::running);
  header(out, "gangway_predicted_wait_seconds", "gauge",
         "Predicted queueing delay of a request arriving now, by model.");
  for (const ModelLoad& model : load.models) {
    fmt::format_to(it, "gangway_predicted_wait_seconds{{model=\"{}\"}} {}\n",
                   label_value(model.model), number(model.predicted_wait_ms / 1000.0));
  }
  header(out, "gangway_kv_usage_ratio", "gauge", "Share of the model's KV pools in use.");
  for (const ModelLoad& model : load.models) {
    fmt::format_to(it, "gangway_kv_usage_ratio{{model=\"{}\"}} {}\n", label_value(model.model),
                   number(model.kv_usage));
  }
  header(out, "gangway_time_to_first_token_seconds", "histogram",
         "Time to first token by model and SLO class, from arrival at the scheduler.");
  for (const ModelSpec& model : node_.models) {
    for (const SloClass& slo : node_.slo_classes) {
      class_ttft_[model.id.value() * classes + slo.id.value()].render(
          out, "gangway_time_to_first_token_seconds",
          "model=\"" + label_value(model.name) + "\",slo_class=\"" + label_value(slo.name) + "\"");
    }
  }
  header(out, "gangway_gang_phase", "gauge", "The large model's gang phase (1 for the current).");
  for (const char* phase : {"off", "pending", "active"}) {
    fmt::format_to(it, "gangway_gang_phase{{phase=\"{}\"}} {}\n", phase,
                   load.gang_phase == phase ? 1 : 0);
  }
  single("gangway_gang_phases_total", "counter", "Gang phases started.", gang_phases);
  single("gangway_live_requests", "gauge", "Requests admitted and not finished.",
         load.live_requests);
  single("gangway_draining", "gauge", "1 while the server drains (after SIGTERM).",
         draining ? 1 : 0);

  header(out, "gangway_http_responses_total", "counter", "HTTP responses by status code.");
  for (size_t i = 0; i < HttpCounters::kStatuses.size(); ++i) {
    const uint64_t n = http.responses[i].load(std::memory_order_relaxed);
    if (n == 0) continue;
    const int status = HttpCounters::kStatuses[i];
    fmt::format_to(it, "gangway_http_responses_total{{code=\"{}\"}} {}\n",
                   status == 0 ? std::string("other") : std::to_string(status), n);
  }
  single("gangway_open_connections", "gauge", "Open HTTP connections.",
         http.open_connections.load());
  single("gangway_connections_total", "counter", "HTTP connections accepted.",
         http.connections_total.load());
  single("gangway_slow_readers_cut_total", "counter",
         "Connections cut off because the client read too slowly.",
         http.slow_readers_cut_total.load());
  single("gangway_read_timeouts_total", "counter",
         "Connections closed because a request did not arrive in time.",
         http.read_timeouts_total.load());
  single("gangway_client_disconnects_total", "counter",
         "Requests cancelled because their client went away.",
         http.client_disconnects_total.load());
  single("gangway_client_writes_total", "counter",
         "Writes of answer bytes to client sockets (send() calls and asynchronous writes).",
         http.client_writes_total.load());
  single("gangway_client_writes_waited_total", "counter",
         "Writes the kernel did not take at once (the client was behind on reading).",
         http.client_writes_waited_total.load());
  single("gangway_connection_errors_total", "counter",
         "Requests whose handling failed inside the server (answered 500 or closed).",
         http.connection_errors_total.load());
  single("gangway_connections_refused_total", "counter",
         "Connections closed when accepted: over the connection limits and the probe reserve.",
         http.connections_refused_total.load());
  single("gangway_reserve_connections_total", "counter",
         "Connections over a connection limit taken into the probe reserve.",
         http.reserve_connections_total.load());

  single("gangway_scheduler_loop_events_total", "counter", "Handlers run on the scheduler thread.",
         loop.events);
  single("gangway_scheduler_loop_busy_seconds_total", "counter",
         "Time the scheduler thread spent in its handlers.", number(loop.busy_seconds));
  single("gangway_scheduler_core_seconds_total", "counter",
         "Time spent inside the scheduler core's calls.", number(loop.core_seconds));
  single("gangway_emulated_iterations_total", "counter", "Emulated iterations completed.",
         loop.iterations);
  single("gangway_emulated_timer_late_seconds_total", "counter",
         "Sum over iterations of how late their completion was handled after the planned end.",
         number(loop.timer_late_seconds));
  single("gangway_emulated_timer_late_seconds_max", "gauge",
         "Latest-handled iteration completion so far, seconds after its planned end.",
         number(loop.timer_late_max_seconds));
  return out;
}

}  // namespace gangway
