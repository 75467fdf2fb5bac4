// The real-time driver of the scheduler core: the server's counterpart of the simulator.
//
// One thread owns the Scheduler, the emulated GPUs (EngineBackend), the wake-up timer and the
// request table, and runs them on its own io_context (or, with server.scheduler_thread `shared`,
// on network thread 0's, which saves the hand-offs between two threads); nothing else touches
// them, so the core needs no lock. Network threads reach it only by posting work (submit,
// cancel, queries), and it answers only by posting batches of StreamEvents to each network
// thread's io_context: network I/O never runs on, or waits for, the loop's handlers, and they
// never wait for the network.
//
// What it does is what Simulator does in virtual time, against the steady clock instead:
// every event is stamped with WallClock::now(); each launch the core asks for starts an emulated
// iteration; a finished iteration streams one token for every batch entry that emits one, then
// reports the entries that reached their emulated output length as ended; finished records go
// to the metrics and to their connections; a timer is armed for next_wakeup().
//
// Draining (SIGTERM): new requests are rejected with Reason::kDraining; when no request is left,
// or the grace period is over (the core then stops the rest with kDriverStopped), `on_drained`
// runs on the loop's thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "config/scenario.h"
#include "config/server_config.h"
#include "engine/emulated_gpus.h"
#include "engine/wall_clock.h"
#include "sched/load_report.h"
#include "sched/request_level/request_level_core.h"
#include "sched/scheduler.h"
#include "server/emulated_output_length.h"
#include "server/engine_control_calls.h"
#include "server/engine_stream.h"
#include "server/log.h"
#include "server/scheduler_heartbeat.h"
#include "server/server_metrics.h"
#include "server/stream_event.h"

namespace gangway {

// A validated request on its way to the scheduler (the spec's id and arrival are set there).
struct Submission {
  std::shared_ptr<StreamSink> sink;
  RequestSpec spec;
  bool ignore_eos = false;
  std::optional<int32_t> min_tokens;
  std::optional<Duration> relative_ttft_deadline;
};

enum class LoopQuery : uint8_t { kHealth, kMetrics, kLoad };

class SchedulerLoop {
 public:
  // Delivers a batch of events on network thread `thread` (runs there). The batch holds every
  // event produced for that thread since its previous delivery: one scheduler event's when the
  // network thread keeps up, several iterations' when it has fallen behind.
  using Deliver = std::function<void(size_t thread, std::vector<StreamEvent>& events)>;

  // `network` are the network threads' io_contexts, indexed like StreamSink::network_thread.
  SchedulerLoop(const Scenario& scenario, const ServerConfig& config, const WallClock& clock,
                std::vector<boost::asio::io_context*> network, Deliver deliver,
                const HttpCounters& http, const Logger* log = nullptr);
  ~SchedulerLoop();

  // Starts the loop's thread; stop() ends it (after stopping the core if still live).
  void start();
  void stop();

  // Thread-safe: each posts to the loop's thread.
  void submit(Submission submission);
  void cancel(std::shared_ptr<StreamSink> sink);
  void query(LoopQuery query, std::shared_ptr<StreamSink> sink);
  // GET /health, answered at once on the calling thread from what the loop last published
  // (scheduler_heartbeat.h): 200 {"status":"ok",...}, or 503 {"status":"stalled",...} while
  // a ping has waited for the loop's thread at least server.scheduler_stall_s. Thread-safe.
  struct HealthAnswer {
    int status = 200;
    std::string body;
  };
  HealthAnswer health();
  // The agent check's answer line (sim/cluster_agent_reply.h) from the load report now, handed
  // to `reply` on the loop's thread.
  void agent_answer(std::function<void(std::string)> reply);
  void begin_drain(Duration grace, std::function<void()> on_drained);
  // Stops every live request now (a second SIGTERM) and then calls the drain callback.
  void stop_requests();

  // Request-level mode (server.engines; scheduler_loop_engines.cc). Thread-safe: a request's
  // engine sent text (`tokens` generated so far), and its call to `engine` ended.
  void engine_text(RequestId id, int32_t tokens);
  void engine_end(RequestId id, uint16_t engine, const EngineStreamEnd& end);
  bool engines_real() const { return engine_core_ != nullptr; }

  boost::asio::io_context& io() { return io_; }

 private:
  struct LiveRequest {
    std::shared_ptr<StreamSink> sink;
    SequenceHandle handle = kNoSequence;
    int32_t max_tokens = 0;
    int32_t tokens_sent = 0;
    Time arrival;
    Time last_token;
    std::optional<Time> planned_first_token;
    ModelId model;
  };
  // Runs `work` on the loop's thread with the busy-time bookkeeping around it.
  template <typename Work>
  void post(Work&& work);

  void handle_submit(Submission& submission, Time now);
  void handle_completion(const IterationCompletion& completion);
  void apply_effects(Time now);
  void finish(const RequestRecord& record, Time now);
  // One network thread's inbox. The loop appends a scheduler event's events and posts a
  // delivery only when none is pending; the delivery takes everything there at the time it runs.
  // So there is at most one post (and one wake-up of that thread) in flight per network thread,
  // and a network thread that falls behind gets several iterations' tokens in one batch, which
  // it writes to each connection in one send.
  struct Mailbox {
    std::mutex mutex;
    std::vector<StreamEvent> events;      // guarded by mutex
    bool delivery_posted = false;         // guarded by mutex
    std::vector<StreamEvent> delivering;  // the network thread's own
  };

  void send(StreamEvent event);
  // Publishes the /health snapshot, then hands the outboxes' events to the network threads: a
  // client that has seen a piece of work's events finds /health up to date, whether the work was
  // posted or an emulated iteration's completion.
  void flush();
  void deliver_mailbox(size_t thread);
  void arm_wakeup(Time now);
  // Arms the loop's one wakeup timer for `wanted` unless an earlier wakeup is armed (Time::max():
  // none wanted); when it fires, `on_timer` runs on the loop's thread at the time it fired.
  void arm_wakeup_at(Time wanted, std::function<void(Time)> on_timer);
  void check_drained(Time now);
  // Stops what is live in the core and cancels the loop's timers (stop()).
  void stop_on_loop_thread();
  // The scenario's faults on the emulated GPUs, timed from the server's start: overruns and
  // stalls stretch the iterations they touch (EmulatedGpus' end adjuster), a gpu_loss loses the
  // GPU's iteration in flight (and the gang's) and tells the core, which fails what ran there.
  void schedule_faults();
  void apply_gpu_loss(size_t fault, bool starts, Time now);
  void end_drain_now(Time now);
  int retry_after_s(ModelId model, Reason reason, Time now) const;
  std::string render_query(LoopQuery query, Time now) const;
  static std::string health_body(const SchedulerHeartbeat::Reading& reading, bool stalled);
  // The load report of the core in use (/load, /metrics, Retry-After, the agent check).
  LoadReport load_report(Time now) const;
  size_t live_in_core() const;

  // Request-level mode (scheduler_loop_engines.cc).
  struct EngineProcess {
    EngineKind kind = EngineKind::kVllm;
    std::string model_name;
    EngineEndpoint endpoint;
    bool health_call_out = false;
    int64_t failures = 0;
    int64_t control_calls = 0;
    double control_seconds = 0;
  };
  void build_engine_core();
  void start_engines();
  void submit_to_engines(Submission& submission, Time now);
  void apply_engine_effects(Time now);
  void control_engine(const EngineControl& control, Time now);
  // Starts a pause, resume or health call on network thread 0; its answer comes back by post.
  void call_engine(EngineIndex engine, EngineCall call, Time asked);
  void on_control_answer(EngineIndex engine, EngineCall call, bool ok, const std::string& why,
                         Time asked, Time now);
  void poll_engine_health();
  void on_health_answer(EngineIndex engine, bool ok, const std::string& why, Time now);
  void engine_failed(EngineIndex engine, const std::string& why, Time now);
  std::string render_engine_metrics() const;

  const Scenario& scenario_;
  const ServerConfig& config_;
  const WallClock& clock_;
  std::vector<boost::asio::io_context*> network_;
  Deliver deliver_;
  const HttpCounters& http_;
  const Logger* log_;

  // The loop runs on its own thread and io_context (own_io_), or, with server.scheduler_thread
  // `shared`, on network thread 0's (then thread_ is unused and started_ says start() ran).
  boost::asio::io_context own_io_;
  bool shared_ = false;
  boost::asio::io_context& io_;
  std::thread thread_;
  bool started_ = false;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<EmulatedGpus> engines_;
  EmulatedOutputLength output_length_;
  ServerMetrics metrics_;
  LoopCounters counters_;
  std::unordered_map<uint64_t, LiveRequest> live_;
  uint64_t next_request_id_ = 1;
  std::vector<std::vector<StreamEvent>> outbox_;     // per network thread, the loop's own
  std::vector<std::unique_ptr<Mailbox>> mailboxes_;  // per network thread
  boost::asio::steady_timer wakeup_;
  Time armed_wakeup_ = Time::max();
  bool draining_ = false;
  Time drain_deadline_ = Time::max();
  boost::asio::steady_timer drain_timer_;
  std::function<void()> on_drained_;
  bool stopped_ = false;
  std::vector<std::unique_ptr<boost::asio::steady_timer>> fault_timers_;
  // Request-level mode: the core that routes requests to engine processes, and the engines.
  std::unique_ptr<RequestLevelCore> engine_core_;
  std::vector<EngineProcess> engine_processes_;  // by EngineIndex
  boost::asio::steady_timer health_timer_;
  SchedulerHeartbeat heartbeat_;
};

// In the header: scheduler_loop.cc and scheduler_loop_engines.cc both post work.
template <typename Work>
void SchedulerLoop::post(Work&& work) {
  boost::asio::post(io_, [this, work = std::forward<Work>(work)]() mutable {
    const auto start = std::chrono::steady_clock::now();
    work(clock_.from_steady(start));
    flush();
    ++counters_.events;
    counters_.busy_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
}

}  // namespace gangway
