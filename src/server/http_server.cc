#include "server/http_server.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sys/resource.h>

#include <boost/asio/post.hpp>
#include <csignal>
#include <nlohmann/json.hpp>

#include "core/input_error.h"
#include "server/http_connection.h"

namespace gangway {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

std::string render_models(const NodeSpec& node) {
  nlohmann::json data = nlohmann::json::array();
  for (const ModelSpec& model : node.models) {
    data.push_back({{"id", model.name},
                    {"object", "model"},
                    {"created", 0},
                    {"owned_by", "gangway"},
                    {"max_model_len", model.max_context_tokens},
                    {"gangway",
                     {{"tier", to_string(model.tier)},
                      {"tensor_parallel", model.tensor_parallel},
                      {"replicas", model.is_large() ? 1 : model.gpus.size()}}}});
  }
  return nlohmann::json{{"object", "list"}, {"data", data}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

asio::ip::address parse_host(const std::string& host) {
  error_code error;
  const std::string name = host == "localhost" ? "127.0.0.1" : host;
  const asio::ip::address address = asio::ip::make_address(name, error);
  if (error) {
    throw InputError::at("", std::nullopt, "server.host",
                         "expected an IP address such as 127.0.0.1 or 0.0.0.0, got '" + host + "'");
  }
  return address;
}

// Every connection is a file descriptor: raises the soft limit toward the hard one so that the
// connection limits, not the descriptor limit, decide. Returns the limit in force.
rlim_t raise_file_limit(rlim_t wanted) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur >= wanted) return limit.rlim_cur;
  const rlim_t before = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return before;
  return limit.rlim_cur;
}

}  // namespace

HttpServer::HttpServer(const Scenario& scenario, const ServerConfig& config, const Logger& log,
                       Options options)
    : scenario_(scenario),
      config_(config),
      log_(log),
      options_(options),
      admission_(config),
      acceptor_([this, &config]() -> asio::io_context& {
        for (int32_t i = 0; i < std::max<int32_t>(1, config.network_threads); ++i) {
          threads_.push_back(std::make_unique<NetworkThread>());
        }
        return threads_[0]->io;
      }()) {
  context_.scenario = &scenario_;
  context_.config = &config_;
  context_.clock = &clock_;
  context_.log = &log_;
  context_.counters = &counters_;
  context_.admission = &admission_;
  context_.api.node = &scenario_.node;
  context_.api.tenants = scenario_.tenants;
  context_.api.default_slo_class = SloClassId(0);
  context_.api.max_json_depth = config_.max_json_depth;
  if (!config_.default_slo_class.empty()) {
    if (const auto id = scenario_.node.find_slo_class(config_.default_slo_class)) {
      context_.api.default_slo_class = *id;
    }
  }
  context_.models_body = render_models(scenario_.node);

  std::vector<asio::io_context*> network;
  for (auto& thread : threads_) network.push_back(&thread->io);
  loop_ = std::make_unique<SchedulerLoop>(
      scenario_, config_, clock_, network,
      [this](size_t thread, std::vector<StreamEvent>& events) { deliver(thread, events); },
      counters_, &log_);
  context_.loop = loop_.get();

  const asio::ip::tcp::endpoint endpoint(parse_host(config_.host), config_.port);
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen(asio::socket_base::max_listen_connections);
  port_ = acceptor_.local_endpoint().port();
  if (config_.agent_port) {
    try {
      agent_ = std::make_unique<AgentCheck>(threads_[0]->io, endpoint.address(),
                                            *config_.agent_port, *loop_, context_.draining, log_);
    } catch (const boost::system::system_error& error) {
      throw InputError::at("", std::nullopt, "server.agent_port",
                           "cannot listen on " + config_.host + ":" +
                               std::to_string(*config_.agent_port) + ": " + error.code().message());
    }
  }
}

HttpServer::~HttpServer() {
  for (auto& thread : threads_) thread->io.stop();
  for (auto& thread : threads_) {
    if (thread->thread.joinable()) thread->thread.join();
  }
  if (loop_) loop_->stop();
}

int HttpServer::run() {
  loop_->start();
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
  for (auto& thread : threads_) guards.push_back(asio::make_work_guard(thread->io));
  for (auto& thread : threads_) {
    thread->sweep = std::make_unique<asio::steady_timer>(thread->io);
    asio::post(thread->io, [this, t = thread.get()] { sweep_write_stalls(*t); });
  }
  for (size_t i = 1; i < threads_.size(); ++i) {
    threads_[i]->thread = std::thread([this, i] {
      const std::string name = "gw-network-" + std::to_string(i);
      pthread_setname_np(pthread_self(), name.c_str());
      run_network_thread(*threads_[i]);
    });
  }
  if (options_.handle_signals) {
    // SIGHUP too: a daemon's terminal going away (or an operator's reload habit) must not kill
    // it; there is nothing to reload, so it is logged and ignored.
    signals_ = std::make_unique<asio::signal_set>(threads_[0]->io, SIGTERM, SIGINT, SIGHUP);
    signals_->async_wait([this](const error_code& error, int signal) { on_signal(error, signal); });
  }
  const auto wanted_files = static_cast<rlim_t>(config_.max_connections) +
                            static_cast<rlim_t>(config_.probe_reserve_connections) + 64;
  if (const rlim_t files = raise_file_limit(wanted_files); files < wanted_files) {
    log_.warn("file_limit", {{"open_files", static_cast<int64_t>(files)},
                             {"wanted", static_cast<int64_t>(wanted_files)},
                             {"effect", "accepts fail (and are retried) before max_connections"}});
  }
  log_.info("listening", {{"host", config_.host},
                          {"port", port_},
                          {"network_threads", threads_.size()},
                          {"scheduler_thread", to_string(config_.scheduler_thread)},
                          {"models", scenario_.node.models.size()},
                          {"gpus", scenario_.node.gpu_count},
                          {"policy", scenario_.policy.name}});
  // Request-level mode: each engine, the memory share to start it with, and the command the
  // launch template gives (docs/engines.md).
  if (config_.engines.real()) {
    log_.info("engines", {{"mode", to_string(config_.engines.mode)},
                          {"count", engine_count(config_.engines)}});
    for (const ModelEngines& model : config_.engines.models) {
      for (const EngineEndpoint& endpoint : model.endpoints) {
        log_.info("engine", {{"model", scenario_.node.model(model.model).name},
                             {"kind", to_string(model.kind)},
                             {"url", endpoint.url},
                             {"memory_share", fmt::format("{:.3f}", endpoint.memory_share)},
                             {"kv_tokens", endpoint.kv_capacity_tokens},
                             {"launch", endpoint.launch_command}});
      }
    }
  }
  accept_retry_ = std::make_unique<asio::steady_timer>(threads_[0]->io);
  accept();
  if (agent_) agent_->start();
  run_network_thread(*threads_[0]);
  guards.clear();
  for (size_t i = 1; i < threads_.size(); ++i) {
    threads_[i]->io.stop();
    if (threads_[i]->thread.joinable()) threads_[i]->thread.join();
  }
  loop_->stop();
  log_.info("stopped");
  return 0;
}

void HttpServer::run_network_thread(NetworkThread& thread) {
  // Connections catch what their own handlers throw (HttpConnection::guarded); this is the last
  // line for everything else on the thread (the accept loop, a delivery): log it and go on, as
  // Asio allows run() to be called again after a handler threw.
  for (;;) {
    try {
      thread.io.run();
      return;
    } catch (const std::exception& error) {
      counters_.connection_errors_total.fetch_add(1, std::memory_order_relaxed);
      log_.error("network_thread_error", {{"error", error.what()}});
    } catch (...) {
      counters_.connection_errors_total.fetch_add(1, std::memory_order_relaxed);
      log_.error("network_thread_error", {{"error", "an exception of unknown type"}});
    }
  }
}

void HttpServer::accept() {
  NetworkThread& target = *threads_[next_thread_];
  const size_t index = next_thread_;
  next_thread_ = (next_thread_ + 1) % threads_.size();
  acceptor_.async_accept(
      target.io, [this, index](const error_code& error, asio::ip::tcp::socket socket) {
        if (error) {
          if (error == asio::error::operation_aborted || !acceptor_.is_open()) return;
          log_.warn("accept_failed", {{"error", error.message()}});
          accept_retry_->expires_after(std::chrono::milliseconds(20));
          accept_retry_->async_wait([this](const error_code& e) {
            if (!e && acceptor_.is_open()) accept();
          });
          return;
        }
        error_code peer_error;
        const asio::ip::tcp::endpoint peer = socket.remote_endpoint(peer_error);
        if (peer_error) {
          error_code ignored;
          socket.close(ignored);  // gone before it was accepted
          accept();
          return;
        }
        const ConnectionClass connection_class = admission_.admit(peer.address());
        if (connection_class == ConnectionClass::kRefused) {
          counters_.connections_refused_total.fetch_add(1, std::memory_order_relaxed);
          error_code ignored;
          socket.close(ignored);
          log_.debug("connection_refused",
                     {{"reason", "over the connection limits and their probe reserve"}});
        } else {
          const uint64_t id = next_connection_id_++;
          NetworkThread& thread = *threads_[index];
          asio::post(thread.io, [this, &thread, index, id, connection_class, peer,
                                 s = std::move(socket)]() mutable {
            auto connection = std::make_shared<HttpConnection>(std::move(s), context_, index, id,
                                                               thread.connections, peer.address(),
                                                               connection_class);
            connection->start();
          });
        }
        accept();
      });
}

void HttpServer::deliver(size_t thread, std::vector<StreamEvent>& events) {
  // Tokens are appended to their connections' pending output first and written afterwards, one
  // write per connection for the whole batch.
  std::vector<std::shared_ptr<HttpConnection>>& to_flush = threads_[thread]->to_flush;
  for (StreamEvent& event : events) {
    auto connection = event.sink->connection.lock();
    if (connection && connection->on_event(event)) to_flush.push_back(std::move(connection));
  }
  for (auto& connection : to_flush) connection->flush_output();
  to_flush.clear();
}

void HttpServer::on_signal(const error_code& error, int signal) {
  if (error) return;
  if (signal == SIGHUP) {
    log_.info("signal", {{"signal", "SIGHUP"}, {"action", "ignored: nothing to reload"}});
    signals_->async_wait([this](const error_code& e, int s) { on_signal(e, s); });
    return;
  }
  ++signals_seen_;
  log_.info("signal", {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"},
                       {"action", signals_seen_ == 1 ? "drain" : "stop now"}});
  if (signals_seen_ == 1) {
    begin_drain();
  } else {
    stop_now();
  }
  signals_->async_wait([this](const error_code& e, int s) { on_signal(e, s); });
}

void HttpServer::run_on_scheduler_thread_for_tests(std::function<void()> work) {
  boost::asio::post(loop_->io(), std::move(work));
}

void HttpServer::begin_drain() {
  start_drain(config_.drain_grace);
}

void HttpServer::stop_now() {
  if (!start_drain(Duration(0))) loop_->stop_requests();
}

bool HttpServer::start_drain(Duration grace) {
  if (drain_begun_.exchange(true)) return false;
  context_.draining.store(true);
  log_.info("draining", {{"grace_s", seconds_text(grace)}});
  loop_->begin_drain(grace, [this] { asio::post(threads_[0]->io, [this] { finish_shutdown(); }); });
  return true;
}

void HttpServer::finish_shutdown() {
  if (finished_.exchange(true)) return;
  context_.shutting_down.store(true);
  error_code ignored;
  acceptor_.close(ignored);
  if (accept_retry_) accept_retry_->cancel();
  if (agent_) agent_->close();
  if (signals_) signals_->cancel(ignored);
  // Each thread closes its idle connections and lets the others finish their last write; the
  // answers of the last requests went out with the events the loop posted before this.
  for (auto& thread : threads_) {
    asio::post(thread->io, [this, t = thread.get()] { close_connections(*t); });
  }
  // Give the last writes a moment, then stop every network thread.
  auto timer = std::make_shared<asio::steady_timer>(threads_[0]->io);
  timer->expires_after(std::chrono::milliseconds(200));
  timer->async_wait([this, timer](const error_code&) {
    for (auto& thread : threads_) thread->io.stop();
  });
}

void HttpServer::sweep_write_stalls(NetworkThread& thread) {
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<HttpConnection>> open;
  for (auto& [id, weak] : thread.connections) {
    if (auto connection = weak.lock()) open.push_back(std::move(connection));
  }
  for (auto& connection : open) connection->check_write_stall(now);
  thread.sweep->expires_after(
      std::max<Duration>(config_.write_stall_timeout / 4, std::chrono::milliseconds(10)));
  thread.sweep->async_wait([this, &thread](const error_code& error) {
    if (!error && !finished_.load()) sweep_write_stalls(thread);
  });
}

void HttpServer::close_connections(NetworkThread& thread) {
  std::vector<std::shared_ptr<HttpConnection>> open;
  for (auto& [id, weak] : thread.connections) {
    if (auto connection = weak.lock()) open.push_back(connection);
  }
  for (auto& connection : open) connection->shutdown();
}

}  // namespace gangway
