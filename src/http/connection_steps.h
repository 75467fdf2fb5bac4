// The socket steps both servers' connections (gangway serve's HttpConnection, gangway engine's
// EngineConnection) take the same way; the only socket code in this layer, header only.
//
// Writes: bytes to send are appended to `out_pending_`; a write takes all of them at once into
// `out_writing_`, and what is appended while it is in flight leaves in the next one. So at most
// one write is in flight per connection, and a client that reads slowly gets several answers' or
// tokens' bytes per write.
//
// Closing after the last answer without losing it: half-close (the client reads to the end of
// the answer), then read and discard what the client still sends until it closes too, a read
// fails, or a second passes; then close. Closing with unread bytes in the socket (say, the body of
// a request refused with 413) would make the kernel reset the connection before the client has
// read the answer.
//
// `Connection` makes ConnectionSteps a friend and has:
//   socket_, read_timer_             the client's socket and the connection's read timer;
//   out_pending_, out_writing_       std::string buffers, as above;
//   writing_, close_after_write_     a write is in flight; the connection closes once it is done;
//   buffer_, watching_               its read buffer; a read watching for bytes is pending;
//   guarded(step)                    ConnectionSteps::guarded(*this, step), for its handlers;
//   on_failure(what)                 what an exception from a step ends (the request, or the
//                                    connection); if it throws too, the connection is closed;
//   on_watch(error, bytes)           a watching read's completion;
//   write_now(), graceful_close()    its next write (if anything is pending) and its closing;
//   on_write_failed(error)           what a failed write ends (the request, the connection);
//   close(), closing_is_done()       closes the socket; whether the connection is closed.
#pragma once

#include <array>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <exception>
#include <memory>
#include <string_view>
#include <utility>

namespace gangway {

struct ConnectionSteps {
  // Runs one step of a connection's work (a completion handler, an event delivery). An exception
  // from it, whatever input or bug caused it, ends what the connection's on_failure() ends; one
  // from on_failure() itself closes the connection. No exception leaves a handler, so no client
  // can stop the server.
  template <typename Connection, typename Step>
  static void guarded(Connection& connection, Step&& step) noexcept {
    try {
      std::forward<Step>(step)();
    } catch (const std::exception& error) {
      fail(connection, error.what());
    } catch (...) {
      fail(connection, "an exception of unknown type");
    }
  }

  // Reads whatever bytes arrive next into the connection's buffer, and hands them to on_watch():
  // the first bytes of a next request, or the client's close while an answer is generated.
  template <typename Connection>
  static void watch_for_bytes(const std::shared_ptr<Connection>& connection) {
    connection->watching_ = true;
    connection->socket_.async_read_some(
        connection->buffer_.prepare(4096),
        [self = connection](const boost::system::error_code& error, size_t bytes) {
          self->guarded([&] { self->on_watch(error, bytes); });
        });
  }

  // Shuts the socket down both ways and closes it (errors ignored: the peer may be gone).
  template <typename Connection>
  static void close_socket(Connection& connection) {
    boost::system::error_code ignored;
    connection.socket_.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    connection.socket_.close(ignored);
  }

  // Writes everything pending. REQUIRES: no write in flight.
  template <typename Connection>
  static void start_async_write(const std::shared_ptr<Connection>& connection) {
    connection->writing_ = true;
    std::swap(connection->out_pending_, connection->out_writing_);
    connection->out_pending_.clear();
    boost::asio::async_write(connection->socket_, boost::asio::buffer(connection->out_writing_),
                             [self = connection](const boost::system::error_code& error, size_t) {
                               self->guarded([&] { finish_async_write(*self, error); });
                             });
  }

  // Half-closes, then closes once the client has closed too (or a second has passed).
  // `reading`: a read of the connection's is already pending; its completion (the client's
  // close) closes, so no second read is started.
  template <typename Connection>
  static void close_after_peer(const std::shared_ptr<Connection>& connection, bool reading) {
    using boost::system::error_code;
    error_code ignored;
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
    connection->socket_.async_read_some(boost::asio::buffer(*buffer),
                                        Discarder{connection, buffer});
  }

 private:
  template <typename Connection>
  static void fail(Connection& connection, std::string_view what) noexcept {
    try {
      connection.on_failure(what);
    } catch (...) {
      try {
        connection.close();
      } catch (...) {
        // Nothing is left to do for this connection; the socket closes with it.
      }
    }
  }

  // A write's completion: the next write if more is pending, else the close it was waiting for.
  template <typename Connection>
  static void finish_async_write(Connection& connection, const boost::system::error_code& error) {
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
};

}  // namespace gangway
