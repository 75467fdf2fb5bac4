#include "batching/pause_mode.h"

namespace gangway {

const char* to_string(PauseMode mode) {
  switch (mode) {
    case PauseMode::kKeep:
      return "keep";
    case PauseMode::kWait:
      return "wait";
    case PauseMode::kAbort:
      return "abort";
  }
  return "abort";
}

std::optional<PauseMode> parse_pause_mode(std::string_view text) {
  if (text == "keep") return PauseMode::kKeep;
  if (text == "wait") return PauseMode::kWait;
  if (text == "abort") return PauseMode::kAbort;
  return std::nullopt;
}

}  // namespace gangway
