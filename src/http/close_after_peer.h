// Ending a connection after its last answer without losing that answer, as both servers (gangway
// serve, gangway engine) do: half-close (the client reads to the end of the answer), then read and
// discard what the client still sends until it closes too, a read fails, or a second passes; then
// close. Closing with unread bytes in the socket (say, the body of a request refused with 413)
// would make the kernel reset the connection before the client has read the answer.
//
// With connection_writes.h, the only socket code in this layer: the steps of a connection's life
// both servers take the same way. `Connection` is a connection class that names
// close_after_peer a friend and has:
//   socket_, read_timer_     the client's socket and the connection's read timer;
//   bool closing_is_done()   whether the connection was closed meanwhile;
//   void close()             closes the socket and lets the connection go;
//   guarded(step)            runs one completion handler's work (exceptions end the connection).
#pragma once

#include <array>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <memory>
#include <utility>

namespace gangway {

// `reading`: a read of the connection's is already pending; its completion (the client's close)
// closes, so no second read is started.
template <typename Connection>
void close_after_peer(const std::shared_ptr<Connection>& connection, bool reading) {
  using boost::system::error_code;
  boost::system::error_code ignored;
  connection->socket_.shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
  connection->read_timer_.expires_after(std::chrono::seconds(1));
  connection->read_timer_.async_wait([self = connection](const error_code& error) {
    if (!error) self->guarded([&] { self->close(); });
  });
  if (reading) return;
  struct Discarder {
    std::shared_ptr<Connection> self;
    std::shared_ptr<std::array<char, 4096>> buffer;
    void operator()(const error_code& error, size_t) {
      // A copy: the next read takes this handler, self included, by move.
      const std::shared_ptr<Connection> held = self;
      held->guarded([&] {
        if (error || held->closing_is_done()) {
          held->close();
          return;
        }
        held->socket_.async_read_some(boost::asio::buffer(*buffer), std::move(*this));
      });
    }
  };
  auto buffer = std::make_shared<std::array<char, 4096>>();
  connection->socket_.async_read_some(boost::asio::buffer(*buffer), Discarder{connection, buffer});
}

}  // namespace gangway
