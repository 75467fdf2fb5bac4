// SchedulerLoop in request-level mode (server.engines, docs/engines.md): the loop drives a
// RequestLevelCore instead of the iteration-level Scheduler and its emulated GPUs. Dispatches
// and aborts travel to the request's network thread as StreamEvents (its connection runs the
// upstream call there, engine_stream.h); pause, resume and health calls run on network thread
// 0; their answers come back by post. The loop's thread never waits for an engine.
#include <fmt/format.h>

#include <boost/asio/post.hpp>
#include <cmath>

#include "config/request_level_setup.h"
#include "server/scheduler_loop.h"

namespace gangway {
namespace {

double engine_seconds_between(Time a, Time b) {
  return to_seconds(b - a);
}

double engine_steady_seconds(std::chrono::steady_clock::time_point a,
                             std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

void SchedulerLoop::build_engine_core() {
  for (const ModelEngines& model : config_.engines.models) {
    for (const EngineEndpoint& endpoint : model.endpoints) {
      EngineProcess process;
      process.kind = model.kind;
      process.model_name = scenario_.node.model(model.model).name;
      process.endpoint = endpoint;
      engine_processes_.push_back(std::move(process));
    }
  }
  engine_core_ = std::make_unique<RequestLevelCore>(
      scenario_.node, engine_descriptors(scenario_.node, config_.engines),
      request_level_options(config_.engines, scenario_.scheduler, scenario_.policy));
}

void SchedulerLoop::start_engines() {
  post([this](Time now) {
    engine_core_->start(now);
    apply_engine_effects(now);
    poll_engine_health();
  });
}

void SchedulerLoop::submit_to_engines(Submission& submission, Time now) {
  const auto start = std::chrono::steady_clock::now();
  engine_core_->submit(submission.spec, now);
  counters_.core_seconds += engine_steady_seconds(start, std::chrono::steady_clock::now());
  apply_engine_effects(now);
}

void SchedulerLoop::engine_text(RequestId id, int32_t tokens) {
  post([this, id, tokens](Time now) {
    if (stopped_) return;
    const auto it = live_.find(id.value());
    if (it == live_.end()) return;
    LiveRequest& request = it->second;
    const auto core_start = std::chrono::steady_clock::now();
    if (!request.planned_first_token) {
      request.planned_first_token = now;
      engine_core_->on_first_token(id, now);
    } else {
      engine_core_->on_tokens(id, tokens, now);
    }
    counters_.core_seconds += engine_steady_seconds(core_start, std::chrono::steady_clock::now());
    if (request.tokens_sent > 0) {
      metrics_.on_inter_token(request.model, to_seconds(now - request.last_token));
    }
    for (int32_t t = request.tokens_sent; t < tokens; ++t)
      metrics_.on_generated_token(request.model);
    request.last_token = now;
    request.tokens_sent = std::max(request.tokens_sent, tokens);
    apply_engine_effects(now);
  });
}

void SchedulerLoop::engine_end(RequestId id, uint16_t engine, const EngineStreamEnd& end) {
  post([this, id, engine, end](Time now) {
    if (stopped_) return;
    if (end.engine_down) engine_failed(engine, end.message, now);
    if (end.outcome != Outcome::kCompleted && log_ && !end.engine_down) {
      log_->warn("engine_request_failed", {{"request", id.value()},
                                           {"engine", engine_processes_[engine].endpoint.url},
                                           {"reason", to_string(end.reason)},
                                           {"error", end.message}});
    }
    engine_core_->on_end(id, end.outcome, end.reason, end.output_tokens, now);
    apply_engine_effects(now);
  });
}

void SchedulerLoop::engine_failed(EngineIndex engine, const std::string& why, Time now) {
  if (!engine_core_->engines()[engine].healthy) return;
  ++engine_processes_[engine].failures;
  if (log_) {
    log_->error("engine_failed", {{"engine", engine_processes_[engine].endpoint.url},
                                  {"model", engine_processes_[engine].model_name},
                                  {"error", why},
                                  {"action", "its requests fail; it is polled until it answers"}});
  }
  engine_core_->on_engine_failed(engine, now);
}

void SchedulerLoop::apply_engine_effects(Time now) {
  RequestLevelEffects& effects = engine_core_->effects();
  for (const EngineControl& control : effects.controls) control_engine(control, now);
  for (const RequestAbort& abort : effects.aborts) {
    const auto it = live_.find(abort.id.value());
    if (it == live_.end()) continue;
    StreamEvent event;
    event.sink = it->second.sink.get();
    event.kind = StreamEvent::Kind::kAbort;
    event.id = abort.id;
    send(std::move(event));
  }
  for (const RequestDispatch& dispatch : effects.dispatches) {
    const auto it = live_.find(dispatch.id.value());
    if (it == live_.end()) continue;
    const EngineProcess& process = engine_processes_[dispatch.engine];
    StreamEvent event;
    event.sink = it->second.sink.get();
    event.kind = StreamEvent::Kind::kDispatch;
    event.id = dispatch.id;
    event.payload = std::make_unique<StreamEventPayload>();
    event.payload->upstream.engine = dispatch.engine;
    event.payload->upstream.host = process.endpoint.host;
    event.payload->upstream.port = process.endpoint.port;
    event.payload->upstream.idle_timeout = config_.engines.idle_timeout;
    send(std::move(event));
  }
  for (const TierChange& change : effects.tier_changes) {
    if (log_) {
      log_->debug("tier_change", {{"holder", to_string(change.holder)},
                                  {"switch_ms", to_ms(engine_core_->switch_latency())}});
    }
  }
  // Finished last: a request aborted above gets its kAbort before its kFinished.
  std::vector<RequestRecord> finished = std::move(effects.finished);
  effects.clear();
  for (const RequestRecord& record : finished) finish(record, now);
  arm_wakeup_at(engine_core_->next_wakeup(now), [this](Time at) {
    engine_core_->on_timer(at);
    apply_engine_effects(at);
  });
  check_drained(now);
}

void SchedulerLoop::control_engine(const EngineControl& control, Time now) {
  call_engine(
      control.engine,
      control.kind == EngineControl::Kind::kPause ? EngineCall::kPause : EngineCall::kResume, now);
}

void SchedulerLoop::call_engine(EngineIndex engine, EngineCall call, Time asked) {
  const EngineProcess& process = engine_processes_[engine];
  UpstreamRequest request =
      engine_control_request(process.kind, call, process.endpoint, config_.engines.control_timeout);
  boost::asio::io_context& io = *network_[0];
  boost::asio::post(io, [this, executor = io.get_executor(), request = std::move(request), engine,
                         call, asked]() mutable {
    auto status = std::make_shared<int>(0);
    UpstreamCall::Handlers handlers;
    handlers.on_headers = [status](int code, bool) { *status = code; };
    handlers.on_end = [this, status, engine, call, asked](UpstreamEnd end,
                                                          std::string_view detail) {
      const bool ok = end == UpstreamEnd::kDone && *status >= 200 && *status < 300;
      std::string why = end == UpstreamEnd::kDone
                            ? "status " + std::to_string(*status)
                            : std::string(to_string(end)) + ": " + std::string(detail);
      post([this, engine, call, ok, asked, why = std::move(why)](Time at) {
        if (stopped_) return;
        if (call == EngineCall::kHealth) {
          on_health_answer(engine, ok, why, at);
        } else {
          on_control_answer(engine, call, ok, why, asked, at);
        }
      });
    };
    UpstreamCall::start(executor, std::move(request), std::move(handlers));
  });
}

void SchedulerLoop::on_control_answer(EngineIndex engine, EngineCall call, bool ok,
                                      const std::string& why, Time asked, Time now) {
  EngineProcess& process = engine_processes_[engine];
  ++process.control_calls;
  process.control_seconds += engine_seconds_between(asked, now);
  if (!ok) {
    engine_failed(engine, std::string("its ") + to_string(call) + " call failed (" + why + ")",
                  now);
  } else if (call == EngineCall::kPause) {
    engine_core_->on_engine_paused(engine, now);
  } else {
    engine_core_->on_engine_resumed(engine, now);
  }
  apply_engine_effects(now);
}

void SchedulerLoop::poll_engine_health() {
  if (stopped_) return;
  const Time now = clock_.now();
  for (size_t e = 0; e < engine_processes_.size(); ++e) {
    EngineProcess& process = engine_processes_[e];
    if (process.health_call_out) continue;
    process.health_call_out = true;
    call_engine(static_cast<EngineIndex>(e), EngineCall::kHealth, now);
  }
  health_timer_.expires_after(config_.engines.health_interval);
  health_timer_.async_wait([this](const boost::system::error_code& error) {
    if (error || stopped_) return;
    post([this](Time) { poll_engine_health(); });
  });
}

void SchedulerLoop::on_health_answer(EngineIndex engine, bool ok, const std::string& why,
                                     Time now) {
  engine_processes_[engine].health_call_out = false;
  const bool healthy = engine_core_->engines()[engine].healthy;
  if (ok && !healthy) {
    if (log_) log_->info("engine_recovered", {{"engine", engine_processes_[engine].endpoint.url}});
    engine_core_->on_engine_recovered(engine, now);
  } else if (!ok && healthy) {
    engine_failed(engine, "its health check failed (" + why + ")", now);
  }
  apply_engine_effects(now);
}

std::string SchedulerLoop::render_engine_metrics() const {
  std::string out;
  const auto family = [&](const char* name, const char* type, const char* help) {
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  const std::vector<EngineSlot>& slots = engine_core_->engines();
  const auto labels = [&](size_t e) {
    return fmt::format(R"(model="{}",engine="{}",kind="{}")", engine_processes_[e].model_name,
                       engine_processes_[e].endpoint.url, to_string(engine_processes_[e].kind));
  };
  family("gangway_engine_up", "gauge", "Whether gangway counts the engine process as healthy.");
  for (size_t e = 0; e < slots.size(); ++e) {
    fmt::format_to(std::back_inserter(out), "gangway_engine_up{{{}}} {}\n", labels(e),
                   slots[e].healthy ? 1 : 0);
  }
  family("gangway_engine_paused", "gauge",
         "Whether the engine is paused or being paused (lease mode: its tier does not hold the "
         "GPUs).");
  for (size_t e = 0; e < slots.size(); ++e) {
    const bool held =
        slots[e].pause == EnginePause::kPaused || slots[e].pause == EnginePause::kPausing;
    fmt::format_to(std::back_inserter(out), "gangway_engine_paused{{{}}} {}\n", labels(e),
                   held ? 1 : 0);
  }
  family("gangway_engine_running_requests", "gauge",
         "Requests dispatched to the engine and not ended.");
  for (size_t e = 0; e < slots.size(); ++e) {
    fmt::format_to(std::back_inserter(out), "gangway_engine_running_requests{{{}}} {}\n", labels(e),
                   slots[e].running.size());
  }
  family("gangway_engine_memory_share", "gauge",
         "The share of each of its GPUs' memory the engine may take (--gpu-memory-utilization "
         "or --mem-fraction-static).");
  for (size_t e = 0; e < slots.size(); ++e) {
    fmt::format_to(std::back_inserter(out), "gangway_engine_memory_share{{{}}} {:.3f}\n", labels(e),
                   engine_processes_[e].endpoint.memory_share);
  }
  family("gangway_engine_pauses_total", "counter", "Pause calls the engine answered.");
  for (size_t e = 0; e < slots.size(); ++e) {
    fmt::format_to(std::back_inserter(out), "gangway_engine_pauses_total{{{}}} {}\n", labels(e),
                   slots[e].pauses);
  }
  family("gangway_engine_resumes_total", "counter", "Resume calls the engine answered.");
  for (size_t e = 0; e < slots.size(); ++e) {
    fmt::format_to(std::back_inserter(out), "gangway_engine_resumes_total{{{}}} {}\n", labels(e),
                   slots[e].resumes);
  }
  family("gangway_engine_failures_total", "counter",
         "Times the engine was found gone or stuck (connection refused or broken, a failed "
         "health, pause or resume call).");
  for (size_t e = 0; e < slots.size(); ++e) {
    fmt::format_to(std::back_inserter(out), "gangway_engine_failures_total{{{}}} {}\n", labels(e),
                   engine_processes_[e].failures);
  }
  family("gangway_engine_control_seconds", "summary",
         "Latency of the engine's pause and resume calls, from asking to its answer on the "
         "scheduler's thread.");
  for (size_t e = 0; e < slots.size(); ++e) {
    fmt::format_to(std::back_inserter(out),
                   "gangway_engine_control_seconds_sum{{{}}} {:.6f}\n"
                   "gangway_engine_control_seconds_count{{{}}} {}\n",
                   labels(e), engine_processes_[e].control_seconds, labels(e),
                   engine_processes_[e].control_calls);
  }
  family("gangway_tier_switches_total", "counter",
         "Times the GPUs changed hands between the small models' engines and the large model's.");
  fmt::format_to(std::back_inserter(out), "gangway_tier_switches_total {}\n",
                 engine_core_->tier_switches());
  family("gangway_tier_switch_seconds", "gauge",
         "Measured latency of a tier switch (pauses and resumes answered), a moving mean.");
  fmt::format_to(std::back_inserter(out), "gangway_tier_switch_seconds {:.6f}\n",
                 to_seconds(engine_core_->switch_latency()));
  family("gangway_tier_holder", "gauge", "Which tier holds the GPUs (1) now.");
  for (const EngineTier tier : {EngineTier::kSmall, EngineTier::kLarge}) {
    fmt::format_to(std::back_inserter(out), "gangway_tier_holder{{tier=\"{}\"}} {}\n",
                   to_string(tier), engine_core_->holder() == tier ? 1 : 0);
  }
  family("gangway_engine_mode", "gauge", "The request-level mode (1 for the one in use).");
  for (const char* mode : {"lease", "exclusive"}) {
    fmt::format_to(std::back_inserter(out), "gangway_engine_mode{{mode=\"{}\"}} {}\n", mode,
                   std::string(to_string(config_.engines.mode)) == mode ? 1 : 0);
  }
  return out;
}

}  // namespace gangway
