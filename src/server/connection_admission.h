// Which new connections `gangway serve` takes, decided when each is accepted: served (within
// max_connections, and max_connections_per_client for its address), taken into the probe
// reserve (over a limit: it may ask only GET /health, /ready or /metrics, once; anything else is
// told 503 too_many_connections or 429 too_many_client_connections), or refused (closed at once:
// the reserve is full, or the address holds its share of it). The reserve keeps liveness and
// readiness probes answering when sockets that send nothing fill every regular slot.
//
// Thread-safe: the accepting thread admits, each connection's network thread releases.
#pragma once

#include <boost/asio/ip/address.hpp>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "config/server_config.h"

namespace gangway {

enum class ConnectionClass : uint8_t {
  kServed,
  kReserveNodeFull,    // over max_connections
  kReserveClientFull,  // over max_connections_per_client
  kRefused,
};

class ConnectionAdmission {
 public:
  // Reserve connections one address may hold, so that one client cannot take the whole reserve.
  static constexpr int32_t kReservePerClient = 4;

  explicit ConnectionAdmission(const ServerConfig& config);

  // Counts the connection (unless refused) until release().
  ConnectionClass admit(const boost::asio::ip::address& client);
  void release(const boost::asio::ip::address& client, ConnectionClass connection_class);

  int64_t served() const;
  int64_t reserved() const;

 private:
  struct PerClient {
    int32_t served = 0;
    int32_t reserved = 0;
  };
  static std::string key(const boost::asio::ip::address& client);

  const int32_t max_connections_;
  const int32_t max_per_client_;
  const int32_t reserve_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, PerClient> clients_;
  int64_t served_ = 0;
  int64_t reserved_ = 0;
};

}  // namespace gangway
