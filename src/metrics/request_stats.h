// Aggregate outcome and latency statistics for one group of requests: an SLO class, a model, or
// the whole node.
//
// Why: goodput and SLO attainment are what every policy is judged by, and the numbers must be the
// same whichever driver (simulator, server, load generator) produced them. The aggregate is told
// about arrivals and finished requests (a RequestRecord each) and never reads a clock; memory is
// constant in the number of requests (counters plus four StreamingHistograms).
//
// Counting rules:
//  - arrived counts on_arrival() calls; every arrival is expected to finish exactly once with
//    one of completed, rejected, cancelled or failed, so in_flight() = arrived - finished.
//  - slo_met counts completed requests whose record says slo_met (a non-completed record never
//    meets its SLO, whatever its flag says); ttft_met likewise for the record's ttft_met (first
//    token within the class's TTFT target, TPOT not judged).
//  - admitted counts finished requests that admission accepted in the class they named: every
//    record but a rejection at arrival (rejected, never scheduled, finished at its arrival
//    instant) and a downgrade (accepted only in a lower class). A request accepted and later
//    shed, expired, failed or cancelled is admitted: a promise not kept. admitted_slo_met counts
//    those of them that met their SLO, and P(SLO met | admitted) = admitted_slo_met / admitted
//    is how well the node keeps what it accepts, beside slo_attainment over every arrival.
//    The admitted requests that missed are counted by cause in promise_misses: completed with
//    the first token late (ttft), completed on time to the first token but off its TPOT target
//    (tpot), or ended without completing (dropped: shed, expired, failed, cancelled, stopped).
//  - reasons counts non-completed outcomes by Reason.
//  - queue_ms records every request that was scheduled (has first_scheduled); ttft_ms every one
//    with a first token; tpot_ms every one with tpot() (two or more output tokens, first token
//    seen), whatever its outcome; e2e_ms completed requests only.
//  - prompt_tokens and cached_prompt_tokens count only requests that were scheduled (a rejected
//    prompt never met the prefix cache), so prefix_hit_rate = cached / prompt is the cache's
//    hit rate over prompts it saw. output_tokens counts every record.
//
// JSON (to_json; key names are a public contract read by outside tools):
//   {"arrived","completed","rejected","failed","cancelled","slo_met",
//    "slo_attainment": slo_met / arrived, or null when nothing arrived,
//    "ttft_met", "ttft_attainment": ttft_met / arrived, or null when nothing arrived,
//    "admitted", "admitted_slo_met",
//    "slo_attainment_admitted": admitted_slo_met / admitted, or null when nothing was admitted,
//    "promise_misses": {"ttft","tpot","dropped"} (sum: admitted - admitted_slo_met), and
//      "dropped_reasons": {reason name: count} (only reasons seen),
//    "goodput_rps": slo_met / simulated_s, or null when simulated_s <= 0,
//    "queue_ms","ttft_ms","tpot_ms","e2e_ms": {"count","mean","min","p50","p90","p99","p999","max"}
//      (all 0 when the histogram is empty),
//    "reasons": {reason name: count} (only reasons seen),
//    "prompt_tokens","output_tokens","cached_prompt_tokens",
//    "prefix_hit_rate": cached / prompt tokens, or null when no prompt token was scheduled}
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>

#include "core/outcome.h"
#include "metrics/streaming_histogram.h"

namespace gangway {

// One histogram's summary in the contract shape {"count","mean","min","p50",...,"max"}.
nlohmann::json histogram_summary_json(const StreamingHistogram& histogram);

class RequestStats {
 public:
  void on_arrival() { ++arrived_; }
  void on_finished(const RequestRecord& record);

  // Adds another group's counts and histograms to this one.
  void merge(const RequestStats& other);

  uint64_t arrived() const { return arrived_; }
  uint64_t completed() const { return completed_; }
  uint64_t rejected() const { return rejected_; }
  uint64_t cancelled() const { return cancelled_; }
  uint64_t failed() const { return failed_; }
  uint64_t finished() const { return completed_ + rejected_ + cancelled_ + failed_; }
  // Arrived but not finished yet; negative only if a driver finishes a request it never reported
  // arriving.
  int64_t in_flight() const {
    return static_cast<int64_t>(arrived_) - static_cast<int64_t>(finished());
  }
  uint64_t slo_met() const { return slo_met_; }
  uint64_t ttft_met() const { return ttft_met_; }
  uint64_t admitted() const { return admitted_; }
  uint64_t admitted_slo_met() const { return admitted_slo_met_; }
  // P(SLO met | admitted) = admitted_slo_met / admitted; 0 when nothing was admitted.
  double slo_attainment_admitted() const {
    return admitted_ == 0 ? 0.0
                          : static_cast<double>(admitted_slo_met_) / static_cast<double>(admitted_);
  }
  // Admitted requests that completed with their first token late, that completed with it on
  // time but off their TPOT target, and that ended without completing.
  uint64_t promise_missed_ttft() const { return promise_missed_ttft_; }
  uint64_t promise_missed_tpot() const { return promise_missed_tpot_; }
  uint64_t promise_dropped() const { return promise_dropped_; }
  // Non-completed outcomes with this reason.
  uint64_t count_with_reason(Reason reason) const {
    return by_reason_[static_cast<std::size_t>(reason)];
  }
  uint64_t prompt_tokens() const { return prompt_tokens_; }
  uint64_t output_tokens() const { return output_tokens_; }
  uint64_t cached_prompt_tokens() const { return cached_prompt_tokens_; }

  const StreamingHistogram& queue_ms() const { return queue_ms_; }
  const StreamingHistogram& ttft_ms() const { return ttft_ms_; }
  const StreamingHistogram& tpot_ms() const { return tpot_ms_; }
  const StreamingHistogram& e2e_ms() const { return e2e_ms_; }

  nlohmann::json to_json(double simulated_s) const;

 private:
  uint64_t arrived_ = 0;
  uint64_t completed_ = 0;
  uint64_t rejected_ = 0;
  uint64_t cancelled_ = 0;
  uint64_t failed_ = 0;
  uint64_t slo_met_ = 0;
  uint64_t ttft_met_ = 0;
  uint64_t admitted_ = 0;
  uint64_t admitted_slo_met_ = 0;
  uint64_t promise_missed_ttft_ = 0;
  uint64_t promise_missed_tpot_ = 0;
  uint64_t promise_dropped_ = 0;
  std::array<uint64_t, kReasonCount> dropped_by_reason_{};
  std::array<uint64_t, kReasonCount> by_reason_{};
  uint64_t prompt_tokens_ = 0;
  uint64_t output_tokens_ = 0;
  uint64_t cached_prompt_tokens_ = 0;
  StreamingHistogram queue_ms_;
  StreamingHistogram ttft_ms_;
  StreamingHistogram tpot_ms_;
  StreamingHistogram e2e_ms_;
};

}  // namespace gangway
