#include "server/scheduler_loop.h"

#include <pthread.h>
#include <sys/prctl.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "sched/load_report.h"
#include "sched/policy_registry.h"
#include "sched/request_level/request_level_load_report.h"
#include "sim/cluster_agent_reply.h"
#include "sim/fault_spec.h"

namespace gangway {
namespace {

double seconds_between(std::chrono::steady_clock::time_point a,
                       std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

SchedulerLoop::SchedulerLoop(const Scenario& scenario, const ServerConfig& config,
                             const WallClock& clock, std::vector<boost::asio::io_context*> network,
                             Deliver deliver, const HttpCounters& http, const Logger* log)
    : scenario_(scenario),
      config_(config),
      clock_(clock),
      network_(std::move(network)),
      deliver_(std::move(deliver)),
      http_(http),
      log_(log),
      shared_(config.scheduler_thread == SchedulerThread::kShared),
      io_(shared_ ? *network_[0] : own_io_),
      scheduler_(std::make_unique<Scheduler>(scenario.node, scenario.scheduler,
                                             make_policy(scenario.policy), nullptr)),
      output_length_(scenario, config.emulated_output),
      metrics_(scenario.node),
      outbox_(network_.size()),
      wakeup_(io_),
      drain_timer_(io_),
      health_timer_(io_) {
  for (size_t i = 0; i < network_.size(); ++i) mailboxes_.push_back(std::make_unique<Mailbox>());
  engines_ = std::make_unique<EmulatedGpus>(
      scenario.node, io_, clock_,
      [this](const IterationCompletion& completion) { handle_completion(completion); });
  if (config.engines.real()) build_engine_core();
  if (!scenario_.faults.empty()) {
    engines_->set_end_adjuster([this](EngineRef engine, Duration cost, Time now) {
      return faulted_end(scenario_.faults, engine, cost, now);
    });
  }
}

void SchedulerLoop::schedule_faults() {
  for (size_t i = 0; i < scenario_.faults.size(); ++i) {
    const FaultSpec& fault = scenario_.faults[i];
    if (fault.kind != FaultKind::kGpuLoss) continue;  // overruns and stalls act at launches
    for (const bool starts : {true, false}) {
      if (!starts && !fault.duration) continue;
      auto timer = std::make_unique<boost::asio::steady_timer>(io_);
      timer->expires_at(clock_.to_steady(starts ? fault.at : fault.at + *fault.duration));
      timer->async_wait([this, i, starts](const boost::system::error_code& error) {
        if (error) return;
        post([this, i, starts](Time now) { apply_gpu_loss(i, starts, now); });
      });
      fault_timers_.push_back(std::move(timer));
    }
  }
}

void SchedulerLoop::apply_gpu_loss(size_t fault, bool starts, Time now) {
  if (stopped_) return;
  const GpuId gpu = *scenario_.faults[fault].gpu;
  if (starts) {
    engines_->lose(gpu);
    scheduler_->on_engine_failed(gpu, now);
  } else {
    scheduler_->on_engine_restored(gpu, now);
  }
  apply_effects(now);
}

SchedulerLoop::~SchedulerLoop() {
  stop();
}

void SchedulerLoop::start() {
  const auto begin = [this] {
    // Emulated iterations end on timers: ask the kernel not to defer their wake-ups by its
    // default 50 us of timer slack.
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    schedule_faults();
    if (engine_core_) start_engines();
  };
  if (shared_) {
    // Network thread 0 runs the loop: it begins when that thread's io_context runs.
    started_ = true;
    boost::asio::post(io_, begin);
    return;
  }
  thread_ = std::thread([this, begin] {
    auto guard = boost::asio::make_work_guard(io_);
    begin();
    io_.run();
  });
  // Named here, before start() returns, so that the name is there as soon as the server is.
  pthread_setname_np(thread_.native_handle(), "gw-scheduler");
}

void SchedulerLoop::stop() {
  if (shared_) {
    // Called on network thread 0 once its io_context has returned (HttpServer::run), or after
    // that thread has ended: nothing else runs the loop now.
    if (!started_) return;
    started_ = false;
    stop_on_loop_thread();
    return;
  }
  if (!thread_.joinable()) return;
  boost::asio::post(io_, [this] {
    stop_on_loop_thread();
    io_.stop();
  });
  thread_.join();
}

void SchedulerLoop::stop_on_loop_thread() {
  if (!stopped_ && live_in_core() > 0) {
    const Time now = clock_.now();
    if (engine_core_) {
      engine_core_->stop(now, Reason::kDriverStopped);
      apply_engine_effects(now);
    } else {
      scheduler_->stop(now, Reason::kDriverStopped);
      engines_->abandon_all();
      apply_effects(now);
    }
  }
  stopped_ = true;
  wakeup_.cancel();
  drain_timer_.cancel();
  health_timer_.cancel();
  for (auto& timer : fault_timers_) timer->cancel();
}

void SchedulerLoop::submit(Submission submission) {
  post([this, submission = std::move(submission)](Time now) mutable {
    handle_submit(submission, now);
  });
}

void SchedulerLoop::cancel(std::shared_ptr<StreamSink> sink) {
  post([this, sink = std::move(sink)](Time now) {
    if (stopped_ || live_.find(sink->id.value()) == live_.end()) return;
    const auto start = std::chrono::steady_clock::now();
    if (engine_core_) {
      engine_core_->cancel(sink->id, now);
      counters_.core_seconds += seconds_between(start, std::chrono::steady_clock::now());
      apply_engine_effects(now);
      return;
    }
    scheduler_->cancel(sink->id, now);
    counters_.core_seconds += seconds_between(start, std::chrono::steady_clock::now());
    apply_effects(now);
  });
}

void SchedulerLoop::query(LoopQuery query, std::shared_ptr<StreamSink> sink) {
  post([this, query, sink = std::move(sink)](Time now) {
    StreamEvent event;
    event.sink = sink.get();
    event.kind = StreamEvent::Kind::kReply;
    event.payload = std::make_unique<StreamEventPayload>();
    event.payload->keep = sink;
    event.payload->reply_body = render_query(query, now);
    send(std::move(event));
  });
}

SchedulerLoop::HealthAnswer SchedulerLoop::health() {
  const SchedulerHeartbeat::Clock::time_point now = SchedulerHeartbeat::Clock::now();
  const SchedulerHeartbeat::Reading reading = heartbeat_.read(now);
  if (heartbeat_.start_ping(now)) boost::asio::post(io_, [this] { heartbeat_.pong(); });
  const bool stalled = reading.ping_out && reading.ping_waiting >= config_.scheduler_stall_limit;
  return HealthAnswer{stalled ? 503 : 200, health_body(reading, stalled)};
}

std::string SchedulerLoop::health_body(const SchedulerHeartbeat::Reading& reading, bool stalled) {
  nlohmann::json body{{"status", stalled ? "stalled" : "ok"},
                      {"live_requests", reading.live_requests},
                      {"draining", reading.draining}};
  if (stalled) {
    body["stalled_s"] =
        std::chrono::duration_cast<std::chrono::milliseconds>(reading.ping_waiting).count() /
        1000.0;
  }
  return body.dump();
}

void SchedulerLoop::agent_answer(std::function<void(std::string)> reply) {
  post([this, reply = std::move(reply)](Time now) {
    reply(agent_line(agent_reply(load_report(now), draining_, AgentReplyOptions())));
  });
}

void SchedulerLoop::begin_drain(Duration grace, std::function<void()> on_drained) {
  post([this, grace, on_drained = std::move(on_drained)](Time now) mutable {
    if (on_drained_ || drain_deadline_ != Time::max()) return;  // a drain has begun
    draining_ = true;
    on_drained_ = std::move(on_drained);
    drain_deadline_ = now + grace;
    drain_timer_.expires_at(clock_.to_steady(drain_deadline_));
    drain_timer_.async_wait([this](const boost::system::error_code& error) {
      if (error || stopped_) return;
      post([this](Time at) { end_drain_now(at); });
    });
    check_drained(now);
  });
}

void SchedulerLoop::stop_requests() {
  post([this](Time now) {
    draining_ = true;
    end_drain_now(now);
  });
}

void SchedulerLoop::handle_submit(Submission& submission, Time now) {
  RequestSpec& spec = submission.spec;
  spec.id = RequestId(next_request_id_++);
  spec.arrival = now;
  if (submission.relative_ttft_deadline)
    spec.ttft_deadline = now + *submission.relative_ttft_deadline;
  submission.sink->id = spec.id;
  metrics_.on_arrival(spec.model, spec.slo_class);
  if (draining_ || stopped_) {
    live_[spec.id.value()] = LiveRequest{submission.sink, kNoSequence, spec.max_tokens, 0, now, now,
                                         std::nullopt,    spec.model};
    finish(rejected_record(spec, Reason::kDraining, now), now);
    return;
  }
  live_[spec.id.value()] = LiveRequest{submission.sink, kNoSequence, spec.max_tokens, 0, now, now,
                                       std::nullopt,    spec.model};
  if (engine_core_) {
    submit_to_engines(submission, now);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  const SubmitResult result = scheduler_->submit(spec, now);
  counters_.core_seconds += seconds_between(start, std::chrono::steady_clock::now());
  if (result.accepted) {
    live_[spec.id.value()].handle = result.handle;
    engines_->admit(result.handle,
                    output_length_.choose(spec.model, spec.slo_class, spec.max_tokens,
                                          submission.ignore_eos, submission.min_tokens));
  }
  apply_effects(now);
}

void SchedulerLoop::handle_completion(const IterationCompletion& completion) {
  const auto start = std::chrono::steady_clock::now();
  const Time now = clock_.from_steady(start);
  const double late_s = std::max(0.0, to_seconds(now - completion.planned_end));
  counters_.timer_late_seconds += late_s;
  counters_.timer_late_max_seconds = std::max(counters_.timer_late_max_seconds, late_s);
  ++counters_.iterations;
  for (const BatchEntry& entry : completion.entries) {
    if (!entry.emits_token) continue;
    const auto it = live_.find(entry.id.value());
    if (it == live_.end()) continue;
    LiveRequest& request = it->second;
    // A sequence recomputed after preemption emits tokens the client already has.
    if (entry.output_tokens_after <= request.tokens_sent) continue;
    request.tokens_sent = entry.output_tokens_after;
    const ModelId model = scheduler_->state().sequence(entry.handle).spec.model;
    if (!request.planned_first_token) {
      request.planned_first_token = completion.planned_end;
    } else {
      metrics_.on_inter_token(model, to_seconds(now - request.last_token));
    }
    request.last_token = now;
    metrics_.on_generated_token(model);
    StreamEvent event;
    event.sink = request.sink.get();  // request.sink keeps it (see StreamEvent)
    event.kind = StreamEvent::Kind::kToken;
    event.id = entry.id;
    event.tokens_after = entry.output_tokens_after;
    send(std::move(event));
  }
  const auto core_start = std::chrono::steady_clock::now();
  scheduler_->on_iteration_done(completion.engine, completion.ended, now);
  counters_.core_seconds += seconds_between(core_start, std::chrono::steady_clock::now());
  apply_effects(now);
  flush();
  ++counters_.events;
  counters_.busy_seconds += seconds_between(start, std::chrono::steady_clock::now());
}

void SchedulerLoop::apply_effects(Time now) {
  Effects& effects = scheduler_->effects();
  for (const IterationLaunch& launch : effects.launches) engines_->launch(launch, now);
  for (const RequestRecord& record : effects.finished) finish(record, now);
  effects.clear();
  arm_wakeup(now);
  check_drained(now);
}

void SchedulerLoop::finish(const RequestRecord& record, Time now) {
  const auto it = live_.find(record.id.value());
  if (it == live_.end()) return;
  LiveRequest request = std::move(it->second);
  live_.erase(it);
  const bool hit_max_tokens = record.output_tokens >= request.max_tokens;
  metrics_.on_finished(record, hit_max_tokens);
  StreamEvent event;
  event.sink = request.sink.get();
  event.kind = StreamEvent::Kind::kFinished;
  event.id = record.id;
  event.payload = std::make_unique<StreamEventPayload>();
  event.payload->keep = std::move(request.sink);
  FinishedRequest& finished = event.payload->finished;
  finished.outcome = record.outcome;
  finished.reason = record.reason;
  finished.prompt_tokens = record.prompt_tokens;
  finished.output_tokens = std::max(record.output_tokens, request.tokens_sent);
  finished.cached_prompt_tokens = record.cached_prompt_tokens;
  finished.hit_max_tokens = hit_max_tokens;
  // The scheduler's own figure when it gave one (admission: until the backlog or the rate
  // limit lets this request through), else one from the load report.
  finished.retry_after_s =
      record.retry_after
          ? std::clamp(static_cast<int>(std::ceil(to_seconds(*record.retry_after))), 1, 600)
          : retry_after_s(record.model, record.reason, now);
  if (request.planned_first_token) {
    finished.engine_ttft_ms = to_ms(*request.planned_first_token - request.arrival);
  }
  if (const auto queue = record.queue_delay()) finished.queue_ms = to_ms(*queue);
  send(std::move(event));
}

void SchedulerLoop::send(StreamEvent event) {
  outbox_[event.sink->network_thread].push_back(std::move(event));
}

void SchedulerLoop::flush() {
  heartbeat_.publish(static_cast<int64_t>(live_in_core()), draining_);
  for (size_t thread = 0; thread < outbox_.size(); ++thread) {
    std::vector<StreamEvent>& out = outbox_[thread];
    if (out.empty()) continue;
    Mailbox& box = *mailboxes_[thread];
    bool post_delivery = false;
    {
      const std::lock_guard lock(box.mutex);
      if (box.events.empty()) {
        // The vectors change hands, capacity and all: no allocation in the steady state.
        box.events.swap(out);
      } else {
        box.events.insert(box.events.end(), std::make_move_iterator(out.begin()),
                          std::make_move_iterator(out.end()));
      }
      post_delivery = !box.delivery_posted;
      box.delivery_posted = true;
    }
    out.clear();
    if (post_delivery) {
      boost::asio::post(*network_[thread], [this, thread] { deliver_mailbox(thread); });
    }
  }
}

void SchedulerLoop::deliver_mailbox(size_t thread) {
  Mailbox& box = *mailboxes_[thread];
  {
    const std::lock_guard lock(box.mutex);
    box.delivering.swap(box.events);
    box.delivery_posted = false;
  }
  if (!box.delivering.empty()) deliver_(thread, box.delivering);
  box.delivering.clear();
}

void SchedulerLoop::arm_wakeup(Time now) {
  arm_wakeup_at(scheduler_->next_wakeup(now), [this](Time at) {
    const auto start = std::chrono::steady_clock::now();
    scheduler_->on_timer(at);
    counters_.core_seconds += seconds_between(start, std::chrono::steady_clock::now());
    apply_effects(at);
  });
}

void SchedulerLoop::arm_wakeup_at(Time wanted, std::function<void(Time)> on_timer) {
  if (wanted == Time::max() || wanted >= armed_wakeup_) return;
  armed_wakeup_ = wanted;
  wakeup_.expires_at(clock_.to_steady(wanted));
  wakeup_.async_wait(
      [this, on_timer = std::move(on_timer)](const boost::system::error_code& error) mutable {
        if (error || stopped_) return;
        post([this, on_timer = std::move(on_timer)](Time at) {
          armed_wakeup_ = Time::max();
          on_timer(at);
        });
      });
}

void SchedulerLoop::check_drained(Time now) {
  (void)now;
  if (!draining_ || !on_drained_ || !live_.empty()) return;
  drain_timer_.cancel();
  flush();
  auto done = std::move(on_drained_);
  on_drained_ = nullptr;
  done();
}

void SchedulerLoop::end_drain_now(Time now) {
  if (engine_core_) {
    if (engine_core_->live_requests() > 0) engine_core_->stop(now, Reason::kDriverStopped);
    apply_engine_effects(now);
  } else {
    if (scheduler_->live_requests() > 0) {
      scheduler_->stop(now, Reason::kDriverStopped);
      engines_->abandon_all();
    }
    apply_effects(now);
  }
  // Requests rejected while draining never reached the core; anything left is gone with it.
  while (!live_.empty()) {
    const auto it = live_.begin();
    RequestRecord record;
    record.id = RequestId(it->first);
    record.outcome = Outcome::kCancelled;
    record.reason = Reason::kDriverStopped;
    record.arrival = it->second.arrival;
    record.finished = now;
    finish(record, now);
  }
  check_drained(now);
}

LoadReport SchedulerLoop::load_report(Time now) const {
  // In front of engine processes the request-level core holds the state; the iteration-level
  // scheduler is idle there.
  return engine_core_ ? compute_load_report(*engine_core_, now)
                      : compute_load_report(scheduler_->state(), now);
}

size_t SchedulerLoop::live_in_core() const {
  return engine_core_ ? engine_core_->live_requests() : scheduler_->live_requests();
}

int SchedulerLoop::retry_after_s(ModelId model, Reason reason, Time now) const {
  if (!retry_elsewhere(reason) && reason != Reason::kDriverStopped) return 1;
  if (reason == Reason::kRateLimited) return 1;
  if (reason == Reason::kDraining || reason == Reason::kDriverStopped) {
    if (drain_deadline_ == Time::max()) return 1;
    return std::clamp(static_cast<int>(std::ceil(to_seconds(drain_deadline_ - now))), 1, 600);
  }
  // The predicted wait for this model: by then the queue ahead has cleared.
  const LoadReport load = load_report(now);
  const double wait_s = load.models[model.value()].predicted_wait_ms / 1000.0;
  return std::clamp(static_cast<int>(std::ceil(wait_s)), 1, 60);
}

std::string SchedulerLoop::render_query(LoopQuery query, Time now) const {
  switch (query) {
    case LoopQuery::kHealth: {  // the network threads answer it (health()); the same body
      SchedulerHeartbeat::Reading reading;
      reading.live_requests = static_cast<int64_t>(live_in_core());
      reading.draining = draining_;
      return health_body(reading, /*stalled=*/false);
    }
    case LoopQuery::kMetrics: {
      std::string text = metrics_.render(load_report(now), http_, counters_, draining_,
                                         scheduler_->state().gang.phases_started);
      if (engine_core_) text += render_engine_metrics();
      return text;
    }
    case LoopQuery::kLoad: {
      nlohmann::json report = to_json(load_report(now));
      report["draining"] = draining_;
      return report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }
  return "";
}

}  // namespace gangway
