#include "workload/workload.h"

#include <memory>
#include <utility>

#include "core/input_error.h"

namespace gangway {

Workload::Workload(std::vector<StreamSpec> streams, const WorkloadOptions& options) {
  if (streams.size() > 65536) {
    throw InputError::at("", std::nullopt, "streams", "expected at most 65536 streams");
  }
  std::vector<std::unique_ptr<RequestSource>> sources;
  sources.reserve(streams.size());
  for (size_t i = 0; i < streams.size(); ++i) {
    auto source = std::make_unique<StreamSource>(std::move(streams[i]), static_cast<uint16_t>(i),
                                                 options.seed, options.kv_block_tokens);
    streams_.push_back(source.get());
    sources.push_back(std::move(source));
  }
  merged_ = std::make_unique<MergedSource>(std::move(sources), Time::zero() + options.duration);
}

}  // namespace gangway
