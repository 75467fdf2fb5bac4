#include "workload/request_source.h"

#include <stdexcept>
#include <utility>

namespace gangway {

MergedSource::MergedSource(std::vector<std::unique_ptr<RequestSource>> sources, Time end)
    : sources_(std::move(sources)), end_(end) {
  size_t streams = 0;
  for (const auto& source : sources_) {
    if (!source) throw std::invalid_argument("MergedSource: null source");
    first_stream_.push_back(streams);
    streams += source->stream_count();
  }
  if (streams > 65536) throw std::invalid_argument("MergedSource: more than 65536 streams");
}

std::optional<size_t> MergedSource::earliest() const {
  std::optional<size_t> best;
  Time best_time = end_;
  for (size_t i = 0; i < sources_.size(); ++i) {
    const std::optional<Time> t = sources_[i]->peek_arrival();
    if (t && *t < best_time) {
      best = i;
      best_time = *t;
    }
  }
  return best;
}

std::optional<Time> MergedSource::peek_arrival() const {
  const std::optional<size_t> index = earliest();
  if (!index) return std::nullopt;
  return sources_[*index]->peek_arrival();
}

std::optional<WorkloadItem> MergedSource::next() {
  const std::optional<size_t> index = earliest();
  if (!index) return std::nullopt;
  std::optional<WorkloadItem> item = sources_[*index]->next();
  if (!item) return std::nullopt;  // a source that peeked something always yields it
  item->spec.id = RequestId(next_id_++);
  item->stream = static_cast<uint16_t>(first_stream_[*index] + item->stream);
  return item;
}

size_t MergedSource::stream_count() const {
  size_t streams = 0;
  for (const auto& source : sources_) streams += source->stream_count();
  return streams;
}

std::string MergedSource::stream_name(size_t stream) const {
  for (size_t i = sources_.size(); i-- > 0;) {
    if (stream >= first_stream_[i]) return sources_[i]->stream_name(stream - first_stream_[i]);
  }
  return {};
}

}  // namespace gangway
