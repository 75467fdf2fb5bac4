// Service-level classes. A request names one; the class says what "on time" means for it and
// how the node may treat it under overload. Classes are ordered by rank: rank 0 is the most
// important and is shed last.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/time.h"

namespace gangway {

// What admission does with a request whose predicted TTFT misses its class target.
enum class MissAction : uint8_t {
  kReject,      // say no now, with a Retry-After (a router can try another node)
  kDowngrade,   // serve it in the class's downgrade_to class (a later target, shed earlier)
  kBestEffort,  // take it anyway; it counts against the class's SLO if it is late
};

struct SloClass {
  SloClassId id;
  std::string name;
  // Targets; absent means "no latency target" (the class only wants completion).
  std::optional<Duration> ttft_target;
  std::optional<Duration> tpot_target;
  // Relative share of capacity when classes compete (used by slack ordering and the arbiter).
  double weight = 1.0;
  // Lower rank = more important. Shedding goes from the highest rank down.
  int rank = 0;
  bool sheddable = true;
  // Class to move a request to when it cannot meet this class's target (if downgrading is on).
  std::optional<SloClassId> downgrade_to;
  MissAction on_predicted_miss = MissAction::kReject;
  // The share of the class's requests that must meet its targets for the node to count as
  // keeping up (`gangway capacity`'s criterion); 0: the class is not judged.
  double attainment_target = 0.99;

  // Whether a first token this long after arrival is within the class's TTFT target (the
  // admission targets are stated on TTFT alone, so reports count it apart from met_by).
  bool ttft_met_by(Duration ttft) const { return !ttft_target || ttft <= *ttft_target; }
  // Whether a mean time per output token (none: fewer than two tokens) is within the TPOT target.
  bool tpot_met_by(std::optional<Duration> tpot) const {
    return !tpot_target || !tpot || *tpot <= *tpot_target;
  }
  // Whether a finished request with these latencies met the class's targets.
  bool met_by(Duration ttft, std::optional<Duration> tpot) const {
    return ttft_met_by(ttft) && tpot_met_by(tpot);
  }
};

// interactive (TTFT <= 200 ms, TPOT <= 50 ms), standard (TTFT <= 2 s), batch (no target).
std::vector<SloClass> default_slo_classes();

}  // namespace gangway
