#include "cli/server_probe.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace gangway {
namespace {

std::optional<std::string> connect_once(const addrinfo& address,
                                        std::chrono::milliseconds timeout) {
  const int socket_fd = ::socket(
      address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, address.ai_protocol);
  if (socket_fd < 0) return std::string(std::strerror(errno));
  const std::unique_ptr<const int, void (*)(const int*)> closer(
      &socket_fd, [](const int* fd) { ::close(*fd); });
  if (::connect(socket_fd, address.ai_addr, address.ai_addrlen) == 0) return std::nullopt;
  if (errno != EINPROGRESS) return std::string(std::strerror(errno));
  pollfd waiting{socket_fd, POLLOUT, 0};
  const int ready = ::poll(&waiting, 1, static_cast<int>(timeout.count()));
  if (ready == 0) {
    return "no answer within " + std::to_string(timeout.count()) + " ms";
  }
  if (ready < 0) return std::string(std::strerror(errno));
  int error = 0;
  socklen_t length = sizeof(error);
  if (::getsockopt(socket_fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
    return std::string(std::strerror(errno));
  }
  if (error != 0) return std::string(std::strerror(error));
  return std::nullopt;
}

}  // namespace

std::optional<std::string> probe_server(const LoadTarget& target,
                                        std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(target.port);
  if (const int status = ::getaddrinfo(target.host.c_str(), port.c_str(), &hints, &found);
      status != 0) {
    return std::string(::gai_strerror(status));
  }
  const std::unique_ptr<addrinfo, void (*)(addrinfo*)> addresses(found, ::freeaddrinfo);
  std::optional<std::string> last_error = "no address";
  for (const addrinfo* address = found; address != nullptr; address = address->ai_next) {
    last_error = connect_once(*address, timeout);
    if (!last_error) return std::nullopt;
  }
  return last_error;
}

}  // namespace gangway
