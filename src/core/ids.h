// Strongly typed identifiers, so that a GPU index can never be passed where a model index is
// expected. All are small dense integers chosen by whoever creates the thing (the node config
// for models, GPUs and classes; the driver for requests).
#pragma once

#include <compare>
#include <cstdint>
#include <functional>

namespace gangway {

template <typename Tag, typename Rep>
class StrongId {
 public:
  using rep_type = Rep;
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep value) : value_(value) {}
  constexpr Rep value() const { return value_; }
  constexpr auto operator<=>(const StrongId&) const = default;

 private:
  Rep value_{};
};

using RequestId = StrongId<struct RequestIdTag, uint64_t>;
using ModelId = StrongId<struct ModelIdTag, uint16_t>;
using GpuId = StrongId<struct GpuIdTag, uint16_t>;
using SloClassId = StrongId<struct SloClassIdTag, uint8_t>;
using TenantId = StrongId<struct TenantIdTag, uint16_t>;

}  // namespace gangway

template <typename Tag, typename Rep>
struct std::hash<gangway::StrongId<Tag, Rep>> {
  size_t operator()(const gangway::StrongId<Tag, Rep>& id) const noexcept {
    return std::hash<Rep>()(id.value());
  }
};
