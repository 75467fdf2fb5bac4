// The agent-check endpoint of `gangway serve`: a TCP port that answers every connection with one
// line of HAProxy's agent protocol ("ready 73%", "drain", "ready down #...") and closes it, so
// that a load balancer weights this node by its own load report (docs/cluster.md).
//
// The answer is computed on the scheduler loop's thread from the core's load report
// (sim/cluster_agent_reply.h: the same function the simulator's model of the balancer uses) and
// written by network thread 0, which also accepts. A scheduler thread that does not answer
// within kSchedulerAnswerTimeout gets the node marked down ("ready down #scheduler not
// answering"): the HTTP readiness check is answered by the network thread alone and would not
// see it.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <string>

#include "server/log.h"
#include "server/scheduler_loop.h"

namespace gangway {

class AgentCheck {
 public:
  static constexpr std::chrono::milliseconds kSchedulerAnswerTimeout{1000};

  // Binds address:port on `io` (throws boost::system::system_error when it cannot). `loop`,
  // `draining` and `log` must outlive every handler posted to `io`.
  AgentCheck(boost::asio::io_context& io, const boost::asio::ip::address& address, uint16_t port,
             SchedulerLoop& loop, const std::atomic<bool>& draining, const Logger& log);

  uint16_t port() const { return port_; }
  // Starts accepting (on io's thread); close() stops (on io's thread). Connections being
  // answered finish on their own.
  void start();
  void close();

 private:
  void accept();

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  SchedulerLoop& loop_;
  const std::atomic<bool>& draining_;
  const Logger& log_;
  uint16_t port_ = 0;
};

}  // namespace gangway
