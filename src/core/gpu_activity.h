// What one GPU is doing at an instant, as the scheduler classifies it. Drivers integrate these
// over time to report utilisation and the time lost to gang barriers and to idling while work
// waits (the two losses the gang policies are judged by).
#pragma once

#include <cstdint>

namespace gangway {

enum class GpuActivity : uint8_t {
  kRunningSmall,      // an SM iteration is in flight
  kRunningLarge,      // an LM gang iteration is in flight on this GPU
  kGangBarrier,       // idle at an iteration boundary, waiting for the rest of the gang
  kIdleWhileWaiting,  // idle although work that could run here is queued
  kIdle,              // idle with nothing to do
  kFailed,            // out of service
};

inline constexpr int kGpuActivityCount = 6;

const char* to_string(GpuActivity activity);

}  // namespace gangway
