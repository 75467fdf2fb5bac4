// The discrete-event simulator: drives the scheduler core in virtual time with a workload, and a
// cost model standing in for the GPUs. It is the "driver" of the sans-I/O core: it owns the
// clock (virtual), the event list and the engines, feeds the core arrivals, iteration
// completions and timer wakeups, and carries out the core's launches by scheduling their
// completions at the time the cost model says.
//
// Deterministic: the same node, policy, workload and options give the same results, bit for bit.
// Memory is constant in the number of requests: the workload is generated lazily and metrics are
// streaming.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/node_spec.h"
#include "metrics/node_time_account.h"
#include "metrics/run_metrics.h"
#include "metrics/timeline_writer.h"
#include "sched/scheduler.h"
#include "sim/arrival_feed.h"
#include "sim/client_cancellations.h"
#include "sim/event_queue.h"
#include "sim/fault_spec.h"
#include "sim/node_driver.h"
#include "sim/simulation_observer.h"
#include "sim/time_series.h"
#include "sim/timeline_counters.h"
#include "workload/request_source.h"

namespace gangway {

struct SimulationOptions {
  // Arrivals stop at `duration`; rates and node fractions are measured over [0, duration).
  Duration duration = std::chrono::seconds(60);
  // After `duration`, in-flight work may run this much longer to finish; what is still live then
  // ends as cancelled with Reason::kDriverStopped.
  Duration drain_limit = std::chrono::seconds(600);
  // Requests that arrive before `warmup` run but are left out of every statistic, and node time
  // is accounted from `warmup` on: the measurement window is [warmup, duration).
  Duration warmup{0};
  // Optional GPU timeline (Chrome trace); not owned.
  TimelineWriter* timeline = nullptr;
  // Faults to inject (sim/fault_spec.h).
  std::vector<FaultSpec> faults;
  // Bin width of the run's time series (sim/time_series.h); zero: none.
  Duration series_bin{0};
  // Clients that cancel (sim/client_cancellations.h); none by default.
  ClientCancellationSpec cancellations;
  // Watches the run event by event (tests); not owned.
  SimulationObserver* observer = nullptr;
};

struct SimulationResult {
  double simulated_s = 0;  // virtual time of the last event
  double measured_s = 0;   // the measurement window, duration - warmup
  int64_t events = 0;
  int64_t requests = 0;
  RunMetrics metrics;
  NodeTimeAccount node_time;
  int64_t gang_phases = 0;
  // With SimulationOptions::series_bin.
  std::optional<TimeSeries> series;
};

class Simulator {
 public:
  // `source` is read lazily during run(); the simulator does not own it.
  Simulator(const NodeSpec& node, SchedulerOptions scheduler_options,
            std::unique_ptr<GangPolicy> policy, std::unique_ptr<Router> router,
            RequestSource& source, SimulationOptions options);
  ~Simulator();

  SimulationResult run();
  const Scheduler& scheduler() const { return driver_.scheduler(); }

 private:
  void submit_next_arrival();
  // The clients' cancellations due after an event, carried out at its time.
  void cancel_due();

  SimulationOptions options_;
  ArrivalFeed arrivals_;
  EventQueue events_;
  NodeDriver driver_;
  Time now_;
  int64_t events_processed_ = 0;
  int64_t requests_ = 0;
  std::optional<TimeSeries> series_;
  ClientCancellations cancellations_;
  std::vector<RequestId> due_;
  std::optional<TimelineCounters> timeline_counters_;  // with a timeline
};

}  // namespace gangway
