#include "metrics/request_stats.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace gangway {

namespace {

// Token counts in a record are non-negative by construction; a negative one is a driver bug
// that must not wrap an unsigned counter.
uint64_t non_negative(int32_t tokens) {
  return static_cast<uint64_t>(std::max(tokens, 0));
}

// Whether admission accepted the request in the class it named. A rejection at arrival never
// reached a queue (admission, or a check before it, turned it away in the instant it arrived);
// a downgraded request was accepted only in a lower class, which is no promise for the one it
// named.
bool admitted_in_its_class(const RequestRecord& record) {
  if (record.downgraded_to) return false;
  return record.outcome != Outcome::kRejected || record.first_scheduled ||
         record.finished != record.arrival;
}

}  // namespace

nlohmann::json histogram_summary_json(const StreamingHistogram& histogram) {
  return {
      {"count", histogram.count()},
      {"mean", histogram.mean()},
      {"min", histogram.min()},
      {"p50", histogram.quantile(0.50)},
      {"p90", histogram.quantile(0.90)},
      {"p99", histogram.quantile(0.99)},
      {"p999", histogram.quantile(0.999)},
      {"max", histogram.max()},
  };
}

void RequestStats::on_finished(const RequestRecord& record) {
  if (admitted_in_its_class(record)) {
    ++admitted_;
    if (record.outcome != Outcome::kCompleted) {
      ++promise_dropped_;
      const auto reason_index = static_cast<std::size_t>(record.reason);
      if (reason_index < dropped_by_reason_.size()) ++dropped_by_reason_[reason_index];
    } else if (record.slo_met) {
      ++admitted_slo_met_;
    } else if (!record.ttft_met) {
      ++promise_missed_ttft_;
    } else {
      ++promise_missed_tpot_;
    }
  }
  switch (record.outcome) {
    case Outcome::kCompleted:
      ++completed_;
      if (record.slo_met) ++slo_met_;
      if (record.ttft_met) ++ttft_met_;
      e2e_ms_.record(to_ms(record.e2e()));
      break;
    case Outcome::kRejected:
      ++rejected_;
      break;
    case Outcome::kCancelled:
      ++cancelled_;
      break;
    case Outcome::kFailed:
      ++failed_;
      break;
  }
  if (record.outcome != Outcome::kCompleted) {
    const auto reason_index = static_cast<std::size_t>(record.reason);
    if (reason_index < by_reason_.size()) ++by_reason_[reason_index];
  }
  if (const auto queue_delay = record.queue_delay()) {
    queue_ms_.record(to_ms(*queue_delay));
    prompt_tokens_ += non_negative(record.prompt_tokens);
    cached_prompt_tokens_ += non_negative(record.cached_prompt_tokens);
  }
  if (const auto ttft = record.ttft()) ttft_ms_.record(to_ms(*ttft));
  if (const auto tpot = record.tpot()) tpot_ms_.record(to_ms(*tpot));
  output_tokens_ += non_negative(record.output_tokens);
}

void RequestStats::merge(const RequestStats& other) {
  arrived_ += other.arrived_;
  completed_ += other.completed_;
  rejected_ += other.rejected_;
  cancelled_ += other.cancelled_;
  failed_ += other.failed_;
  slo_met_ += other.slo_met_;
  ttft_met_ += other.ttft_met_;
  admitted_ += other.admitted_;
  admitted_slo_met_ += other.admitted_slo_met_;
  promise_missed_ttft_ += other.promise_missed_ttft_;
  promise_missed_tpot_ += other.promise_missed_tpot_;
  promise_dropped_ += other.promise_dropped_;
  for (std::size_t i = 0; i < dropped_by_reason_.size(); ++i) {
    dropped_by_reason_[i] += other.dropped_by_reason_[i];
  }
  for (std::size_t i = 0; i < by_reason_.size(); ++i) by_reason_[i] += other.by_reason_[i];
  prompt_tokens_ += other.prompt_tokens_;
  output_tokens_ += other.output_tokens_;
  cached_prompt_tokens_ += other.cached_prompt_tokens_;
  queue_ms_.merge(other.queue_ms_);
  ttft_ms_.merge(other.ttft_ms_);
  tpot_ms_.merge(other.tpot_ms_);
  e2e_ms_.merge(other.e2e_ms_);
}

nlohmann::json RequestStats::to_json(double simulated_s) const {
  const auto by_name = [](const std::array<uint64_t, kReasonCount>& counts) {
    nlohmann::json named = nlohmann::json::object();
    for (int i = 0; i < kReasonCount; ++i) {
      const uint64_t count = counts[static_cast<std::size_t>(i)];
      if (count > 0) named[to_string(static_cast<Reason>(i))] = count;
    }
    return named;
  };
  const nlohmann::json reasons = by_name(by_reason_);
  const auto ratio_or_null = [](double numerator, double denominator) -> nlohmann::json {
    if (!(denominator > 0.0)) return nullptr;
    return numerator / denominator;
  };
  return {
      {"arrived", arrived_},
      {"completed", completed_},
      {"rejected", rejected_},
      {"failed", failed_},
      {"cancelled", cancelled_},
      {"slo_met", slo_met_},
      {"slo_attainment",
       ratio_or_null(static_cast<double>(slo_met_), static_cast<double>(arrived_))},
      {"ttft_met", ttft_met_},
      {"ttft_attainment",
       ratio_or_null(static_cast<double>(ttft_met_), static_cast<double>(arrived_))},
      {"admitted", admitted_},
      {"admitted_slo_met", admitted_slo_met_},
      {"slo_attainment_admitted",
       ratio_or_null(static_cast<double>(admitted_slo_met_), static_cast<double>(admitted_))},
      {"promise_misses",
       {{"ttft", promise_missed_ttft_},
        {"tpot", promise_missed_tpot_},
        {"dropped", promise_dropped_},
        {"dropped_reasons", by_name(dropped_by_reason_)}}},
      {"goodput_rps", ratio_or_null(static_cast<double>(slo_met_), simulated_s)},
      {"queue_ms", histogram_summary_json(queue_ms_)},
      {"ttft_ms", histogram_summary_json(ttft_ms_)},
      {"tpot_ms", histogram_summary_json(tpot_ms_)},
      {"e2e_ms", histogram_summary_json(e2e_ms_)},
      {"reasons", reasons},
      {"prompt_tokens", prompt_tokens_},
      {"output_tokens", output_tokens_},
      {"cached_prompt_tokens", cached_prompt_tokens_},
      {"prefix_hit_rate", ratio_or_null(static_cast<double>(cached_prompt_tokens_),
                                        static_cast<double>(prompt_tokens_))},
  };
}

}  // namespace gangway
