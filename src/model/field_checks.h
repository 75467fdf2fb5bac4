// Range checks for the model layer's inputs, shared by the cost models' validate() functions.
// Each throws std::invalid_argument with "FIELD: expected RANGE, got VALUE", naming the field as
// the spec structs spell it (e.g. "cost.compute_efficiency"), so that the config layer only has
// to prefix the file and the model's key path. Internal to src/model.
#pragma once

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gangway::field_checks {

[[noreturn]] inline void reject(std::string_view field, std::string_view expected, double got) {
  std::ostringstream message;
  message << field << ": expected " << expected << ", got " << got;
  throw std::invalid_argument(message.str());
}

// (0, 1]: an achieved fraction of a peak.
inline void require_fraction(std::string_view field, double value) {
  if (!(value > 0.0 && value <= 1.0)) reject(field, "a fraction in (0, 1]", value);
}

inline void require_positive(std::string_view field, double value) {
  if (!(value > 0.0 && std::isfinite(value))) reject(field, "a finite number > 0", value);
}

inline void require_non_negative(std::string_view field, double value) {
  if (!(value >= 0.0 && std::isfinite(value))) reject(field, "a finite number >= 0", value);
}

inline void require_at_least(std::string_view field, long long minimum, long long value) {
  if (value < minimum) {
    reject(field, "an integer >= " + std::to_string(minimum), static_cast<double>(value));
  }
}

}  // namespace gangway::field_checks
