// `gangway engine`'s process: one thread running one Asio io_context that holds the listening
// socket, every connection (engine_connection.h) and the engine's iteration timer. The engine
// (batching/continuous_batching_engine.h) runs its iterations back to back in real time, each as
// long as the cost model says, while it has work; its tokens go to the connections at the end of
// each iteration. One thread: no locks, and the engine's state is always read between iterations.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "batching/continuous_batching_engine.h"
#include "batching/seeded_output_length.h"
#include "model/cost_model.h"
#include "test_engine/engine_api_error.h"
#include "test_engine/generation_parameters.h"
#include "test_engine/test_engine_options.h"

namespace gangway {

class EngineConnection;

class TestEngineServer {
 public:
  // Binds host:port (port 0 picks a free one). InputError for an address that is not an IP
  // address or a port that cannot be bound.
  TestEngineServer(const TestEngineSetup& setup, const std::string& host, uint16_t port,
                   uint64_t seed, std::ostream& log);
  ~TestEngineServer();
  TestEngineServer(const TestEngineServer&) = delete;
  TestEngineServer& operator=(const TestEngineServer&) = delete;

  uint16_t port() const { return port_; }
  // Serves until stop(), or SIGTERM / SIGINT when handle_signals; returns 0.
  int run(bool handle_signals);
  // Thread-safe.
  void stop();

  // For the connections (on the server's thread).
  const std::string& model_name() const { return setup_.model.name; }
  const std::string& models_body() const { return models_body_; }
  int64_t created_unix_s() const { return created_unix_s_; }
  // Adds the request to the engine; its updates go to `connection` (EngineConnection::on_update).
  std::variant<uint64_t, EngineApiError> submit(const GenerationParameters& request,
                                                std::weak_ptr<EngineConnection> connection);
  // The client went away: the request ends in the engine and nothing more is delivered.
  void abort(uint64_t id);
  // `waiter` gets on_pause_complete() once the pause has taken effect (maybe at once).
  void pause(PauseMode mode, std::weak_ptr<EngineConnection> waiter);
  void resume();
  bool is_paused() const { return engine_.is_paused(); }
  std::string metrics() const;
  std::string next_response_id(ApiEndpoint endpoint);

 private:
  void accept();
  void start_iteration_if_idle();
  void end_iteration();
  void deliver(const std::vector<RequestUpdate>& updates);
  void answer_pause_waiters();

  TestEngineSetup setup_;
  std::ostream& log_;
  boost::asio::io_context io_{1};
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer iteration_timer_;
  std::unique_ptr<boost::asio::signal_set> signals_;
  std::unique_ptr<CostModel> cost_;
  ContinuousBatchingEngine engine_;
  SeededOutputLength output_lengths_;
  uint64_t seed_;
  std::unordered_map<uint64_t, std::weak_ptr<EngineConnection>> requests_;
  std::vector<std::weak_ptr<EngineConnection>> pause_waiters_;
  // Every connection accepted, so that stop() can close them (expired ones are dropped as new
  // ones come).
  std::vector<std::weak_ptr<EngineConnection>> connections_;
  size_t live_connections_at_last_sweep_ = 0;
  std::string models_body_;
  int64_t created_unix_s_ = 0;
  uint64_t next_request_id_ = 1;
  uint64_t requests_submitted_ = 0;
  uint16_t port_ = 0;
};

}  // namespace gangway
