// Where the simulator's requests come from: synthetic streams or a replayed trace, behind one
// small interface, so the driver does not care which.
//
// A source hands out requests lazily, one at a time, in non-decreasing arrival order, with
// RequestIds 0, 1, 2, ... in that order. Nothing is generated or read before it is asked for
// (beyond one request of lookahead), so memory does not grow with the number of requests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/request.h"
#include "core/time.h"

namespace gangway {

struct WorkloadItem {
  // What the scheduler sees at arrival.
  RequestSpec spec;
  // Ground truth: how many tokens the engine will generate (<= spec.max_tokens). Hidden from the
  // scheduler; only the engine model (and an oracle policy) may read it.
  int32_t output_tokens = 0;
  // Which of the source's streams produced it (see RequestSource::stream_name).
  uint16_t stream = 0;
};

class RequestSource {
 public:
  virtual ~RequestSource() = default;
  // Arrival time of the request next() would return; nullopt when there are no more.
  virtual std::optional<Time> peek_arrival() const = 0;
  virtual std::optional<WorkloadItem> next() = 0;
  // Streams are numbered 0..stream_count()-1 in WorkloadItem::stream.
  virtual size_t stream_count() const = 0;
  virtual std::string stream_name(size_t stream) const = 0;
};

// Merges sources in arrival order (ties go to the source listed first), renumbers RequestIds
// 0, 1, 2, ... in the merged order, numbers streams consecutively (the first source's streams
// first), and stops before the first arrival at or after `end`.
class MergedSource final : public RequestSource {
 public:
  explicit MergedSource(std::vector<std::unique_ptr<RequestSource>> sources,
                        Time end = Time::max());

  std::optional<Time> peek_arrival() const override;
  std::optional<WorkloadItem> next() override;
  size_t stream_count() const override;
  std::string stream_name(size_t stream) const override;

  const RequestSource& source(size_t index) const { return *sources_[index]; }
  size_t source_count() const { return sources_.size(); }

 private:
  // Index of the source with the earliest arrival before end_, if any.
  std::optional<size_t> earliest() const;

  std::vector<std::unique_ptr<RequestSource>> sources_;
  std::vector<size_t> first_stream_;  // per source
  Time end_;
  uint64_t next_id_ = 0;
};

}  // namespace gangway
