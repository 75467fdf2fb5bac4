// A synthetic workload: several streams merged into one time-ordered request source.
//
// The simulator's usual source of requests. Same streams + same seed = the same requests, bit
// for bit, on any platform; stream i draws only from its own random streams, so adding or
// changing a stream leaves the others' requests (times, lengths, content) unchanged.
#pragma once

#include <cstdint>
#include <vector>

#include "core/time.h"
#include "workload/request_source.h"
#include "workload/stream_source.h"
#include "workload/workload_spec.h"

namespace gangway {

struct WorkloadOptions {
  uint64_t seed = 0;
  // No request arrives at or after this time from the start.
  Duration duration = Duration::max();
  // The node's KV block size, at which RequestSpec::prefix_blocks are hashed.
  int32_t kv_block_tokens = 16;
};

class Workload final : public RequestSource {
 public:
  // Validates every stream (InputError). At most 65536 streams.
  Workload(std::vector<StreamSpec> streams, const WorkloadOptions& options);

  std::optional<Time> peek_arrival() const override { return merged_->peek_arrival(); }
  std::optional<WorkloadItem> next() override { return merged_->next(); }
  size_t stream_count() const override { return streams_.size(); }
  std::string stream_name(size_t stream) const override { return streams_[stream]->spec().name; }

  const StreamSource& stream(size_t index) const { return *streams_[index]; }

 private:
  std::vector<const StreamSource*> streams_;  // owned by merged_
  std::unique_ptr<MergedSource> merged_;
};

}  // namespace gangway
