// The default backend of `gangway serve`: the node's GPUs emulated in real time. Each launch
// takes the time the model's cost model gives for its batch shape (the same engine truth the
// simulator uses), measured by one steady timer per engine (each GPU, and the gang); when the
// timer fires the iteration is complete, and every sequence that reached the output length it
// was admitted with has ended.
//
// Why a timer per engine and not a thread per GPU: an emulated GPU does no work, it only has to
// be busy for the right time, and timers on the driver's event loop cost nothing while waiting.
// Runs on the driver's io_context; not thread-safe (the driver's thread only).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/node_spec.h"
#include "engine/engine_backend.h"
#include "engine/wall_clock.h"
#include "model/cost_model.h"

namespace gangway {

class EmulatedGpus final : public EngineBackend {
 public:
  EmulatedGpus(const NodeSpec& node, boost::asio::io_context& io, const WallClock& clock,
               CompletionHandler on_complete);
  ~EmulatedGpus() override;

  void admit(SequenceHandle handle, int32_t emulated_output_tokens) override;
  Duration launch(const IterationLaunch& launch, Time now) override;
  void abandon_all() override;

  // Iterations in flight now (for tests and metrics).
  int in_flight() const;

  // Injected faults (the scenario's `faults:`, applied by the driver). Each launch's end as the
  // cost model gives it goes through `adjust` (overruns and stalls).
  using EndAdjuster = std::function<Time(EngineRef engine, Duration cost, Time now)>;
  void set_end_adjuster(EndAdjuster adjust) { adjust_end_ = std::move(adjust); }
  // The GPU is lost: its iteration in flight, and the gang's if it is running, will never be
  // reported (the driver tells the core, which fails what ran there).
  void lose(GpuId gpu);

 private:
  struct Engine {
    explicit Engine(boost::asio::io_context& io) : timer(io) {}
    boost::asio::steady_timer timer;
    std::span<const BatchEntry> entries;
    EngineRef ref;
    Time started;
    Time planned_end;
    bool busy = false;
    uint64_t generation = 0;  // tells a stale timer completion from the current one
  };
  void complete(size_t engine_index, uint64_t generation);

  const NodeSpec& node_;
  const WallClock& clock_;
  CompletionHandler on_complete_;
  std::vector<std::unique_ptr<CostModel>> cost_;  // by ModelId value
  std::vector<std::unique_ptr<Engine>> engines_;  // GPUs 0..n-1, then the gang
  std::vector<int32_t> output_tokens_;            // by SequenceHandle
  std::vector<RequestId> scratch_ended_;
  EndAdjuster adjust_end_;
};

}  // namespace gangway
