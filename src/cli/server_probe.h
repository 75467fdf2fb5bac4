// One TCP connection attempt to the load target before `gangway load` starts sending, so that a
// dead port or a wrong address is reported at once instead of after the whole arrival window.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "client/load_generator.h"

namespace gangway {

// Connects to `target` and closes the connection. Returns why it failed ("Connection refused",
// "no answer within 3 s"), or nothing when the server accepted it.
std::optional<std::string> probe_server(const LoadTarget& target,
                                        std::chrono::milliseconds timeout);

}  // namespace gangway
