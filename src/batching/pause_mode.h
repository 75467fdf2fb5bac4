// How a pause treats the requests in flight, as vLLM's POST /pause?mode= has it:
//  - keep: nothing is scheduled from the next iteration on; running requests stay frozen with
//    their KV kept, and go on where they were after resume;
//  - wait: no new request starts; the running ones finish, then the engine is paused;
//  - abort: every request (running and waiting) ends at once with finish_reason "abort".
// In every mode new requests are accepted while paused and wait until resume.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gangway {

enum class PauseMode : uint8_t { kKeep, kWait, kAbort };

const char* to_string(PauseMode mode);
// "keep", "wait" or "abort"; nullopt for anything else.
std::optional<PauseMode> parse_pause_mode(std::string_view text);

}  // namespace gangway
