// `gangway serve`'s HTTP side: the listening socket, the network threads and their
// connections, in front of the scheduler loop (scheduler_loop.h).
//
// Threads: `network_threads` threads each run an io_context with the connections assigned to
// them (round robin at accept), and the scheduler loop has one more (or, with
// server.scheduler_thread `shared`, runs on network thread 0's io_context). All socket work is
// asynchronous (Boost.Beast over Asio, epoll underneath), so one network thread holds thousands
// of connections; a thread per connection would not hold 1,600 streaming requests a second on
// two cores. The thread that calls run() runs network thread 0 (which also accepts and, when
// asked, catches SIGTERM and SIGINT, and logs and ignores SIGHUP).
//
// Lifecycle: construct (binds; port 0 picks a free port), run() until drained. begin_drain()
// (the first SIGTERM) turns readiness off, answers new generation requests 503 draining, lets the
// requests in flight finish within drain_grace, then closes every connection and returns 0 from
// run(). A second SIGTERM (or stop_now()) stops the requests in flight at once.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include "config/scenario.h"
#include "config/server_config.h"
#include "engine/wall_clock.h"
#include "server/agent_check.h"
#include "server/connection_admission.h"
#include "server/log.h"
#include "server/openai_request.h"
#include "server/scheduler_loop.h"
#include "server/server_metrics.h"

namespace gangway {

class HttpConnection;

// What every connection reads; owned by HttpServer, alive for its whole life.
struct ServerContext {
  const Scenario* scenario = nullptr;
  const ServerConfig* config = nullptr;
  const WallClock* clock = nullptr;
  const Logger* log = nullptr;
  SchedulerLoop* loop = nullptr;
  HttpCounters* counters = nullptr;
  ConnectionAdmission* admission = nullptr;
  ApiContext api;
  std::string models_body;  // GET /v1/models, rendered once
  std::atomic<bool> draining{false};
  std::atomic<bool> shutting_down{false};
};

class HttpServer {
 public:
  struct Options {
    bool handle_signals = false;
  };
  // Binds config.host:config.port (InputError if the address is bad, std::system_error if the
  // port cannot be bound). The scenario and config must outlive the server.
  HttpServer(const Scenario& scenario, const ServerConfig& config, const Logger& log,
             Options options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound port (the chosen one when config.port was 0).
  uint16_t port() const { return port_; }
  // The agent-check port (agent_check.h); 0 without one.
  uint16_t agent_port() const { return agent_ ? agent_->port() : 0; }

  // Open connections within the limits, and in the probe reserve (thread-safe).
  int64_t served_connections() const { return admission_.served(); }
  int64_t reserve_connections() const { return admission_.reserved(); }

  // Tests only: runs `work` on the scheduler loop's thread, in turn with everything posted there
  // (a test blocks the thread with it). Thread-safe.
  void run_on_scheduler_thread_for_tests(std::function<void()> work);

  // Serves until drained or stopped; returns the exit status (0).
  int run();
  // Thread-safe.
  void begin_drain();
  void stop_now();

 private:
  struct NetworkThread {
    boost::asio::io_context io{1};
    std::unique_ptr<boost::asio::steady_timer> sweep;
    std::thread thread;
    std::unordered_map<uint64_t, std::weak_ptr<HttpConnection>> connections;
    // Connections with output pending from the batch being delivered.
    std::vector<std::shared_ptr<HttpConnection>> to_flush;
  };
  // Runs the thread's io_context until it stops; an exception that escapes a handler is logged
  // and the thread goes on.
  void run_network_thread(NetworkThread& thread);
  void accept();
  void on_signal(const boost::system::error_code& error, int signal);
  void deliver(size_t thread, std::vector<StreamEvent>& events);
  // Starts draining with this grace period; false if a drain had already begun.
  bool start_drain(Duration grace);
  void finish_shutdown();
  void close_connections(NetworkThread& thread);
  // Every quarter of write_stall_timeout: cuts off the thread's connections whose write stalled.
  void sweep_write_stalls(NetworkThread& thread);

  const Scenario& scenario_;
  const ServerConfig& config_;
  const Logger& log_;
  Options options_;
  WallClock clock_;
  HttpCounters counters_;
  // Before the threads: connections release their slot when they are destroyed with them.
  ConnectionAdmission admission_;
  ServerContext context_;
  std::vector<std::unique_ptr<NetworkThread>> threads_;
  std::unique_ptr<SchedulerLoop> loop_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::unique_ptr<boost::asio::signal_set> signals_;
  // Waits before the next accept after one failed (say, out of file descriptors), so that a
  // failing accept does not spin.
  std::unique_ptr<boost::asio::steady_timer> accept_retry_;
  std::unique_ptr<AgentCheck> agent_;
  uint16_t port_ = 0;
  size_t next_thread_ = 0;
  uint64_t next_connection_id_ = 1;
  int signals_seen_ = 0;
  std::atomic<bool> drain_begun_{false};
  std::atomic<bool> finished_{false};
};

}  // namespace gangway
