#include "test_engine/test_engine_server.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <chrono>
#include <csignal>
#include <nlohmann/json.hpp>

#include "core/input_error.h"
#include "core/mix64.h"
#include "test_engine/engine_connection.h"
#include "test_engine/engine_metrics.h"

namespace gangway {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

asio::ip::address parse_host(const std::string& host) {
  error_code error;
  const asio::ip::address address =
      asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, error);
  if (error) {
    throw InputError::at("", std::nullopt, "--host",
                         "expected an IP address such as 127.0.0.1 or 0.0.0.0, got '" + host + "'");
  }
  return address;
}

int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

TestEngineServer::TestEngineServer(const TestEngineSetup& setup, const std::string& host,
                                   uint16_t port, uint64_t seed, std::ostream& log)
    : setup_(setup),
      log_(log),
      acceptor_(io_),
      iteration_timer_(io_),
      cost_(make_cost_model(setup_.model, setup_.hardware)),
      engine_(*cost_, setup_.limits),
      output_lengths_(seed),
      seed_(seed),
      created_unix_s_(unix_seconds()) {
  const asio::ip::tcp::endpoint endpoint(parse_host(host), port);
  try {
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen(asio::socket_base::max_listen_connections);
  } catch (const boost::system::system_error& error) {
    throw InputError::at(
        "", std::nullopt, "--port",
        "cannot listen on " + host + ":" + std::to_string(port) + ": " + error.code().message());
  }
  port_ = acceptor_.local_endpoint().port();
  nlohmann::json card = {{"id", setup_.model.name},
                         {"object", "model"},
                         {"created", created_unix_s_},
                         {"owned_by", "vllm"},
                         {"root", setup_.model.name},
                         {"parent", nullptr},
                         {"max_model_len", engine_.limits().max_model_len}};
  models_body_ = nlohmann::json{{"object", "list"}, {"data", nlohmann::json::array({card})}}.dump();
}

TestEngineServer::~TestEngineServer() = default;

int TestEngineServer::run(bool handle_signals) {
  if (handle_signals) {
    signals_ = std::make_unique<asio::signal_set>(io_, SIGTERM, SIGINT);
    signals_->async_wait([this](const error_code& error, int) {
      if (!error) stop();
    });
  }
  log_ << fmt::format(
      "gangway engine: {} on {} (TP {}, {}), {} KV blocks of {} tokens, max_model_len {}, "
      "max_num_seqs {}, max_num_batched_tokens {}; listening on http://{}:{}\n",
      setup_.model.name, setup_.hardware.name, setup_.model.tensor_parallel,
      cost_settings_text(setup_.model.cost), engine_.limits().kv_blocks,
      engine_.limits().block_tokens, engine_.limits().max_model_len, engine_.limits().max_num_seqs,
      engine_.limits().max_num_batched_tokens, acceptor_.local_endpoint().address().to_string(),
      port_);
  log_.flush();
  accept();
  for (;;) {
    try {
      io_.run();
      break;
    } catch (const std::exception& error) {
      // A handler's failure ends its connection (EngineConnection::guarded); anything else is
      // logged and the server goes on.
      log_ << "gangway engine: error: " << error.what() << "\n";
    }
  }
  return 0;
}

void TestEngineServer::stop() {
  asio::post(io_, [this] {
    // Open connections hold themselves while busy: closing them lets every one go.
    for (auto& weak : connections_) {
      if (auto connection = weak.lock()) connection->shut_down();
    }
    connections_.clear();
    error_code ignored;
    acceptor_.close(ignored);
    iteration_timer_.cancel();
    if (signals_) signals_->cancel(ignored);
    io_.stop();
  });
}

void TestEngineServer::accept() {
  acceptor_.async_accept([this](const error_code& error, asio::ip::tcp::socket socket) {
    if (error) {
      if (error == asio::error::operation_aborted || !acceptor_.is_open()) return;
      // Out of descriptors, say: try again shortly rather than spin.
      auto retry = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(20));
      retry->async_wait([this, retry](const error_code& e) {
        if (!e && acceptor_.is_open()) accept();
      });
      return;
    }
    auto connection = std::make_shared<EngineConnection>(std::move(socket), *this);
    if (connections_.size() >= 2 * live_connections_at_last_sweep_ + 64) {
      std::erase_if(connections_, [](const auto& weak) { return weak.expired(); });
      live_connections_at_last_sweep_ = connections_.size();
    }
    connections_.push_back(connection);
    connection->start();
    accept();
  });
}

std::string TestEngineServer::next_response_id(ApiEndpoint endpoint) {
  const uint64_t value = mix64(seed_ ^ mix64(++requests_submitted_ + 0x51ed));
  return fmt::format("{}-{:016x}", endpoint == ApiEndpoint::kChatCompletions ? "chatcmpl" : "cmpl",
                     value);
}

std::variant<uint64_t, EngineApiError> TestEngineServer::submit(
    const GenerationParameters& request, std::weak_ptr<EngineConnection> connection) {
  const int32_t max_model_len = engine_.limits().max_model_len;
  if (request.prompt_tokens >= max_model_len) {
    return EngineApiError::bad_request(fmt::format(
        "This model's maximum context length is {} tokens. However, your request has {} input "
        "tokens. Please reduce the length of the input messages.",
        max_model_len, request.prompt_tokens));
  }
  const int32_t room = max_model_len - request.prompt_tokens;
  if (request.max_tokens && *request.max_tokens > room) {
    return EngineApiError::bad_request(
        fmt::format("This model's maximum context length is {} tokens. However, you requested {} "
                    "tokens ({} in the messages, {} in the completion). Please reduce the length "
                    "of the messages or completion.",
                    max_model_len, request.prompt_tokens + *request.max_tokens,
                    request.prompt_tokens, *request.max_tokens),
        "max_tokens");
  }
  EngineRequest engine_request;
  engine_request.id = next_request_id_++;
  engine_request.prompt_tokens = request.prompt_tokens;
  engine_request.max_tokens = request.max_tokens.value_or(room);
  if (request.ignore_eos.value_or(false)) {
    engine_request.stop_after_tokens = engine_request.max_tokens;
  } else if (request.min_tokens) {
    engine_request.stop_after_tokens = std::min(*request.min_tokens, engine_request.max_tokens);
  } else if (request.max_tokens && !request.ignore_eos.has_value()) {
    engine_request.stop_after_tokens = *request.max_tokens;
  } else {
    engine_request.stop_after_tokens =
        output_lengths_.draw(engine_request.id, engine_request.max_tokens);
  }
  if (engine_.add(engine_request) != ContinuousBatchingEngine::AddResult::kAccepted) {
    return EngineApiError::bad_request("the request does not fit this engine");
  }
  requests_[engine_request.id] = std::move(connection);
  start_iteration_if_idle();
  return engine_request.id;
}

void TestEngineServer::abort(uint64_t id) {
  requests_.erase(id);
  engine_.abort(id);
  answer_pause_waiters();
}

void TestEngineServer::pause(PauseMode mode, std::weak_ptr<EngineConnection> waiter) {
  pause_waiters_.push_back(std::move(waiter));
  deliver(engine_.pause(mode));
  answer_pause_waiters();
  start_iteration_if_idle();  // wait mode: the started requests go on
}

void TestEngineServer::resume() {
  engine_.resume();
  // A pause still waiting for its requests to drain is answered: it is over.
  std::vector<std::weak_ptr<EngineConnection>> waiters;
  waiters.swap(pause_waiters_);
  for (auto& weak : waiters) {
    if (auto connection = weak.lock()) connection->on_pause_complete();
  }
  start_iteration_if_idle();
}

std::string TestEngineServer::metrics() const {
  return render_engine_metrics(engine_, setup_.model.name);
}

void TestEngineServer::start_iteration_if_idle() {
  if (engine_.iteration_in_flight()) return;
  const std::optional<Duration> duration = engine_.begin_iteration();
  if (!duration) return;
  iteration_timer_.expires_after(*duration);
  iteration_timer_.async_wait([this](const error_code& error) {
    if (!error) end_iteration();
  });
}

void TestEngineServer::end_iteration() {
  deliver(engine_.end_iteration());
  answer_pause_waiters();
  start_iteration_if_idle();
}

void TestEngineServer::deliver(const std::vector<RequestUpdate>& updates) {
  for (const RequestUpdate& update : updates) {
    const auto found = requests_.find(update.id);
    if (found == requests_.end()) continue;
    const std::shared_ptr<EngineConnection> connection = found->second.lock();
    if (update.finished) requests_.erase(found);
    if (connection) {
      connection->on_update(update);
    } else if (!update.finished) {
      // The connection is gone without telling: end the request.
      requests_.erase(update.id);
      engine_.abort(update.id);
    }
  }
}

void TestEngineServer::answer_pause_waiters() {
  if (pause_waiters_.empty() || !engine_.pause_complete()) return;
  std::vector<std::weak_ptr<EngineConnection>> waiters;
  waiters.swap(pause_waiters_);
  for (auto& weak : waiters) {
    if (auto connection = weak.lock()) connection->on_pause_complete();
  }
}

}  // namespace gangway
