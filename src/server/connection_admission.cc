#include "server/connection_admission.h"

namespace gangway {

ConnectionAdmission::ConnectionAdmission(const ServerConfig& config)
    : max_connections_(config.max_connections),
      max_per_client_(config.max_connections_per_client),
      reserve_(config.probe_reserve_connections) {}

std::string ConnectionAdmission::key(const boost::asio::ip::address& client) {
  if (client.is_v4()) {
    const auto bytes = client.to_v4().to_bytes();
    return std::string(bytes.begin(), bytes.end());
  }
  const auto bytes = client.to_v6().to_bytes();
  return std::string(bytes.begin(), bytes.end());
}

ConnectionClass ConnectionAdmission::admit(const boost::asio::ip::address& client) {
  const std::lock_guard lock(mutex_);
  PerClient& counts = clients_[key(client)];
  ConnectionClass result = ConnectionClass::kServed;
  if (counts.served >= max_per_client_) {
    result = ConnectionClass::kReserveClientFull;
  } else if (served_ >= max_connections_) {
    result = ConnectionClass::kReserveNodeFull;
  }
  if (result == ConnectionClass::kServed) {
    ++counts.served;
    ++served_;
  } else if (reserved_ < reserve_ && counts.reserved < kReservePerClient) {
    ++counts.reserved;
    ++reserved_;
  } else {
    result = ConnectionClass::kRefused;
    if (counts.served == 0 && counts.reserved == 0) clients_.erase(key(client));
  }
  return result;
}

void ConnectionAdmission::release(const boost::asio::ip::address& client,
                                  ConnectionClass connection_class) {
  if (connection_class == ConnectionClass::kRefused) return;
  const std::lock_guard lock(mutex_);
  const auto it = clients_.find(key(client));
  if (it == clients_.end()) return;
  if (connection_class == ConnectionClass::kServed) {
    --it->second.served;
    --served_;
  } else {
    --it->second.reserved;
    --reserved_;
  }
  if (it->second.served == 0 && it->second.reserved == 0) clients_.erase(it);
}

int64_t ConnectionAdmission::served() const {
  const std::lock_guard lock(mutex_);
  return served_;
}

int64_t ConnectionAdmission::reserved() const {
  const std::lock_guard lock(mutex_);
  return reserved_;
}

}  // namespace gangway
