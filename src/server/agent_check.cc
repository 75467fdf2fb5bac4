#include "server/agent_check.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <memory>

namespace gangway {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// One agent connection: waits for the scheduler's answer (or the timeout), writes it, closes.
class AgentAnswer : public std::enable_shared_from_this<AgentAnswer> {
 public:
  AgentAnswer(asio::ip::tcp::socket socket, const std::atomic<bool>& draining)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), draining_(draining) {}

  void start(SchedulerLoop& loop) {
    timer_.expires_after(AgentCheck::kSchedulerAnswerTimeout);
    timer_.async_wait([self = shared_from_this()](const error_code& error) {
      if (error) return;
      self->write(self->draining_.load() ? "drain\n"
                                         : "ready down #scheduler not answering within 1 s\n");
    });
    // The loop answers on its own thread; the line comes back to this connection's thread.
    loop.agent_answer([self = shared_from_this()](std::string line) {
      asio::post(self->socket_.get_executor(),
                 [self, line = std::move(line)]() mutable { self->write(std::move(line)); });
    });
  }

 private:
  void write(std::string line) {
    if (answered_) return;
    answered_ = true;
    timer_.cancel();
    line_ = std::move(line);
    asio::async_write(socket_, asio::buffer(line_),
                      [self = shared_from_this()](const error_code&, size_t) {
                        error_code ignored;
                        self->socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
                        self->socket_.close(ignored);
                      });
  }

  asio::ip::tcp::socket socket_;
  asio::steady_timer timer_;
  const std::atomic<bool>& draining_;
  std::string line_;
  bool answered_ = false;
};

}  // namespace

AgentCheck::AgentCheck(asio::io_context& io, const asio::ip::address& address, uint16_t port,
                       SchedulerLoop& loop, const std::atomic<bool>& draining, const Logger& log)
    : io_(io), acceptor_(io), loop_(loop), draining_(draining), log_(log) {
  const asio::ip::tcp::endpoint endpoint(address, port);
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen(asio::socket_base::max_listen_connections);
  port_ = acceptor_.local_endpoint().port();
}

void AgentCheck::start() {
  log_.info("agent_check_listening", {{"port", port_}});
  accept();
}

void AgentCheck::close() {
  error_code ignored;
  acceptor_.close(ignored);
}

void AgentCheck::accept() {
  acceptor_.async_accept(io_, [this](const error_code& error, asio::ip::tcp::socket socket) {
    if (error) {
      if (error == asio::error::operation_aborted || !acceptor_.is_open()) return;
      log_.warn("agent_accept_failed", {{"error", error.message()}});
    } else {
      std::make_shared<AgentAnswer>(std::move(socket), draining_)->start(loop_);
    }
    accept();
  });
}

}  // namespace gangway
