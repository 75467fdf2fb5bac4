// A connection's writes, as both servers (gangway serve, gangway engine) make them: bytes to send
// are appended to `out_pending_`; a write takes all of them at once into `out_writing_`, and what
// is appended while it is in flight leaves in the next one. So at most one write is in flight per
// connection, and a client that reads slowly gets several answers' or tokens' bytes per write.
//
// Header only, beside close_after_peer.h. `Connection` names these functions friends and has:
//   socket_                          the client's socket;
//   out_pending_, out_writing_       std::string buffers, as above;
//   writing_, close_after_write_     a write is in flight; the connection closes once it is done;
//   guarded(step)                    runs one completion handler's work;
//   write_now(), graceful_close()    its next write (if anything is pending) and its closing;
//   on_write_failed(error)           what a failed write ends (the request, the connection);
//   bool closing_is_done()           whether the connection was closed meanwhile.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/error_code.hpp>
#include <memory>
#include <utility>

namespace gangway {

template <typename Connection>
void finish_async_write(Connection& connection, const boost::system::error_code& error);

// Writes everything pending. REQUIRES: no write in flight.
template <typename Connection>
void start_async_write(const std::shared_ptr<Connection>& connection) {
  connection->writing_ = true;
  std::swap(connection->out_pending_, connection->out_writing_);
  connection->out_pending_.clear();
  boost::asio::async_write(connection->socket_, boost::asio::buffer(connection->out_writing_),
                           [self = connection](const boost::system::error_code& error, size_t) {
                             self->guarded([&] { finish_async_write(*self, error); });
                           });
}

// A write's completion: the next write if more is pending, else the close it was waiting for.
template <typename Connection>
void finish_async_write(Connection& connection, const boost::system::error_code& error) {
  connection.writing_ = false;
  connection.out_writing_.clear();
  if (connection.closing_is_done()) return;
  if (error) {
    connection.on_write_failed(error);
    return;
  }
  connection.write_now();
  if (!connection.writing_ && connection.close_after_write_) connection.graceful_close();
}

}  // namespace gangway
