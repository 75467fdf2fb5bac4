// Reading a request source to its end in tests: one definition for every test file of the
// workload layer.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "workload/request_source.h"

namespace gangway {

// Every item of `source`, `limit` at most, checking that peek_arrival() announces each one's
// arrival and, once the source is done, none.
inline std::vector<WorkloadItem> drain(RequestSource& source, size_t limit = 10000000) {
  std::vector<WorkloadItem> items;
  while (items.size() < limit) {
    const std::optional<Time> peeked = source.peek_arrival();
    std::optional<WorkloadItem> item = source.next();
    if (!item) {
      EXPECT_FALSE(peeked.has_value());
      break;
    }
    EXPECT_EQ(peeked, item->spec.arrival);
    items.push_back(std::move(*item));
  }
  return items;
}

}  // namespace gangway
