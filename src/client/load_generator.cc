// `gangway load`'s event loop (client/load_generator.h). Longer than most files because it is
// one state machine over one io_context: arrivals, the connection pool, the read poller and each
// answer's parsing share the exchanges in flight, so its sections (marked below) are one class.
// The SSE reader lives in engine/sse_stream, the workload in workload/.

#include "client/load_generator.h"

#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/prctl.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <deque>
#include <nlohmann/json.hpp>
#include <system_error>
#include <unordered_map>

#include "core/input_error.h"
#include "engine/emulated_tokenizer.h"
#include "engine/sse_stream.h"
#include "engine/wall_clock.h"
#include "server/openai_response.h"

namespace gangway {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using boost::system::error_code;
using tcp = asio::ip::tcp;

// Whether a name can go in a header value as it is (no control characters: CR, LF, ...).
bool header_safe(std::string_view name) {
  return std::none_of(name.begin(), name.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7f;
  });
}

std::optional<Reason> reason_from_code(std::string_view code) {
  for (int r = 0; r < kReasonCount; ++r) {
    if (code == to_string(static_cast<Reason>(r))) return static_cast<Reason>(r);
  }
  return std::nullopt;
}

// error.code of an OpenAI error body, when it is a string; "" for any other body (looked up
// with find(): a const JSON object's operator[] must not be asked for a key it lacks).
std::string error_code_of(const std::string& body_text) {
  const nlohmann::json body = nlohmann::json::parse(body_text, nullptr, false);
  if (!body.is_object()) return "";
  const auto error = body.find("error");
  if (error == body.end() || !error->is_object()) return "";
  const auto code = error->find("code");
  if (code == error->end() || !code->is_string()) return "";
  return code->get<std::string>();
}

// How the core would have recorded a request that ended for this reason.
Outcome outcome_for(Reason reason) {
  switch (reason) {
    case Reason::kNone:
      return Outcome::kCompleted;
    case Reason::kClientCancelled:
    case Reason::kDeadlineExpired:
    case Reason::kDriverStopped:
      return Outcome::kCancelled;
    case Reason::kEngineFailed:
      return Outcome::kFailed;
    default:
      return Outcome::kRejected;
  }
}

}  // namespace

LoadTarget parse_load_url(const std::string& url) {
  auto fail = [&](const std::string& why) {
    return InputError::at("", std::nullopt, "--url",
                          "expected http://HOST:PORT, got '" + url + "' (" + why + ")");
  };
  std::string_view rest = url;
  if (!rest.starts_with("http://")) throw fail("only http:// is supported");
  rest.remove_prefix(7);
  for (std::string_view suffix : {"/v1/", "/v1", "/"}) {
    if (rest.ends_with(suffix)) {
      rest.remove_suffix(suffix.size());
      break;
    }
  }
  if (rest.find('/') != std::string_view::npos) throw fail("a path is not supported");
  LoadTarget target;
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos) {
    target.host = std::string(rest);
    target.port = 80;
  } else {
    target.host = std::string(rest.substr(0, colon));
    int port = -1;
    const std::string_view digits = rest.substr(colon + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc() || end != digits.data() + digits.size() || port < 1 || port > 65535) {
      throw fail("bad port");
    }
    target.port = static_cast<uint16_t>(port);
  }
  if (target.host.empty()) throw fail("no host");
  if (target.host == "localhost") target.host = "127.0.0.1";
  return target;
}

LoadResult::LoadResult(const NodeSpec& node)
    : metrics(node.slo_class_names(), node.model_names()) {}

class LoadGenerator::Impl {
 public:
  Impl(const Scenario& scenario, RequestSource& source, LoadOptions options)
      : scenario_(scenario),
        source_(source),
        options_(std::move(options)),
        result_(scenario.node),
        arrival_timer_(io_),
        drain_timer_(io_),
        progress_timer_(io_),
        read_poller_(io_) {
    const int poller = epoll_create1(EPOLL_CLOEXEC);
    if (poller < 0) throw std::system_error(errno, std::generic_category(), "epoll_create1");
    read_poller_.assign(poller);
    error_code error;
    const auto address = asio::ip::make_address(options_.target.host, error);
    if (error) {
      throw InputError::at(
          "", std::nullopt, "--url",
          "expected an IP address or localhost as the host, got '" + options_.target.host + "'");
    }
    endpoint_ = tcp::endpoint(address, options_.target.port);
    for (const ModelSpec& model : scenario.node.models)
      model_json_.push_back(json_escape(model.name));
    path_ =
        options_.endpoint == Endpoint::kCompletions ? "/v1/completions" : "/v1/chat/completions";
    host_header_ = fmt::format("{}:{}", options_.target.host, options_.target.port);
  }

  LoadResult run() {
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // send each request on time
    arm_read_poller();
    clock_ = WallClock();  // arrivals are relative to the start of the run
    window_end_ = Time::zero() + options_.duration;
    result_.window_s = to_seconds(options_.duration - options_.warmup);
    next_item_ = source_.next();
    schedule_arrivals();
    if (options_.progress) arm_progress();
    io_.run();
    result_.wall_s = to_seconds(clock_.now() - Time::zero());
    if (options_.progress) {
      print_progress();
      *options_.progress << "\n";
      options_.progress->flush();
    }
    return std::move(result_);
  }

 private:
  // Registry of the live connections by id, for the read poller's events (an event fetched in a
  // batch may name a connection closed while handling an earlier one of the batch).
  struct Connection;
  using ConnectionRegistry = std::unordered_map<uint64_t, Connection*>;
  struct Connection {
    Connection(asio::io_context& io, uint64_t connection_id, ConnectionRegistry& connections)
        : socket(io), id(connection_id), registry(connections) {
      registry.emplace(id, this);
    }
    ~Connection() { registry.erase(id); }
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;
    tcp::socket socket;
    boost::beast::flat_buffer buffer;
    Time idle_since;
    const uint64_t id;
    ConnectionRegistry& registry;
    bool polled = false;   // registered with the read poller
    bool reading = false;  // an exchange is reading its answer (reader)
    uint64_t reader = 0;   // that exchange's sequence
  };
  static constexpr Duration kIdleReuseLimit = std::chrono::seconds(5);

  struct Exchange {
    uint64_t sequence = 0;
    bool measured = true;  // arrived after the warm-up
    WorkloadItem item;
    std::string request;
    std::unique_ptr<Connection> connection;
    bool reused_connection = false;
    bool retried = false;
    std::optional<http::response_parser<http::string_body>> parser;
    std::function<std::uint64_t(std::uint64_t, boost::beast::string_view, error_code&)> on_chunk;
    Time sent;
    std::optional<Time> first_token;
    int32_t tokens = 0;
    SseSplitter events;
    int32_t invalid_events = 0;  // data that is neither a JSON object nor [DONE]
    bool saw_done = false;
    bool saw_finish = false;
    bool got_bytes = false;
    std::optional<double> engine_ttft_ms;
    std::optional<double> queue_ms;
    int32_t cached_prompt_tokens = 0;
    std::optional<int32_t> usage_completion_tokens;
    std::optional<Reason> stream_error;
  };
  using ExchangePtr = std::shared_ptr<Exchange>;

  // --- arrivals ---------------------------------------------------------------------------
  void schedule_arrivals() {
    const Time now = clock_.now();
    while (next_item_ && next_item_->spec.arrival < window_end_ &&
           next_item_->spec.arrival <= now) {
      launch(std::move(*next_item_));
      next_item_ = source_.next();
    }
    if (!next_item_ || next_item_->spec.arrival >= window_end_) {
      next_item_.reset();
      sending_done_ = true;
      drain_timer_.expires_at(
          clock_.to_steady(std::max(now, window_end_) + options_.drain_timeout));
      drain_timer_.async_wait([this](const error_code& error) {
        if (!error) abandon_all();
      });
      check_done();
      return;
    }
    arrival_timer_.expires_at(clock_.to_steady(next_item_->spec.arrival));
    arrival_timer_.async_wait([this](const error_code& error) {
      if (!error) schedule_arrivals();
    });
  }

  void launch(WorkloadItem item) {
    auto exchange = std::make_shared<Exchange>();
    exchange->sequence = next_sequence_++;
    exchange->item = std::move(item);
    build_request(*exchange);
    exchange->measured = exchange->item.spec.arrival >= Time::zero() + options_.warmup;
    if (exchange->measured) {
      result_.metrics.on_arrival(exchange->item.spec.model, exchange->item.spec.slo_class);
    }
    ++result_.sent;
    active_.emplace(exchange->sequence, exchange);
    acquire_connection(exchange);
  }

  void build_request(Exchange& exchange) {
    const RequestSpec& spec = exchange.item.spec;
    const std::string prompt = synthesize_prompt_text(
        spec.prefix_blocks, std::max<int32_t>(1, spec.prompt_tokens),
        spec.id.value() * 0x9e3779b97f4a7c15ULL + scenario_.seed, scenario_.node.kv_block_tokens);
    const int32_t max_tokens = std::max<int32_t>(1, spec.max_tokens);
    const int32_t output = std::clamp<int32_t>(exchange.item.output_tokens, 1, max_tokens);
    std::string body;
    body.reserve(prompt.size() + 256);
    auto out = std::back_inserter(body);
    fmt::format_to(out, R"({{"model":"{}",)", model_json_[spec.model.value()]);
    if (options_.endpoint == Endpoint::kCompletions) {
      fmt::format_to(out, R"("prompt":"{}",)", prompt);
    } else {
      fmt::format_to(out, R"("messages":[{{"role":"user","content":"{}"}}],)", prompt);
    }
    fmt::format_to(out,
                   R"("max_tokens":{},"min_tokens":{},"stream":true,)"
                   R"("stream_options":{{"include_usage":true}},"slo_class":"{}","tenant":"{}"}})",
                   max_tokens, output, json_escape(scenario_.node.slo_class(spec.slo_class).name),
                   json_escape(scenario_.tenants.at(spec.tenant.value())));
    // The tenant also goes in a header, where a balancer in front of the nodes can route on it
    // (docs/cluster.md); the server reads the same name from either.
    const std::string& tenant = scenario_.tenants.at(spec.tenant.value());
    exchange.request = fmt::format(
        "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: gangway-load\r\nContent-Type: "
        "application/json\r\nAccept: text/event-stream\r\n{}Content-Length: {}\r\n\r\n",
        path_, host_header_,
        header_safe(tenant) ? fmt::format("X-Gangway-Tenant: {}\r\n", tenant) : std::string(),
        body.size());
    exchange.request.append(body);
  }

  // --- connections -------------------------------------------------------------------------
  // `fresh`: a new connection, never one from the pool (a retry: the server that closed the
  // connection the request failed on has likely closed the other idle ones too).
  void acquire_connection(const ExchangePtr& exchange, bool fresh = false) {
    // Connections idle longer than a server may keep them (gangway: read_timeout_s, 15 s) are
    // retired rather than reused, so that few requests are sent into a connection the server is
    // closing (those that are get sent again: transport_failure). The pool is ordered by
    // idle_since (released connections join at the back, the newest is reused first), so the
    // stale ones are at the front; retiring them also frees the descriptors of connections the
    // server has closed meanwhile.
    const Time now = clock_.now();
    while (!idle_.empty() && now - idle_.front()->idle_since > kIdleReuseLimit) {
      error_code ignored;
      idle_.front()->socket.close(ignored);
      idle_.pop_front();
      --open_connections_;
    }
    if (fresh && !idle_.empty() && open_connections_ >= options_.max_connections) {
      // Room for the new one: the longest idle goes.
      error_code ignored;
      idle_.front()->socket.close(ignored);
      idle_.pop_front();
      --open_connections_;
    }
    if (!idle_.empty() && !fresh) {
      exchange->connection = std::move(idle_.back());
      idle_.pop_back();
      exchange->reused_connection = true;
      send(exchange);
      return;
    }
    if (open_connections_ >= options_.max_connections) {
      waiting_.push_back(exchange);
      return;
    }
    ++open_connections_;
    result_.peak_connections = std::max<int64_t>(result_.peak_connections, open_connections_);
    exchange->connection = std::make_unique<Connection>(io_, next_connection_id_++, connections_);
    exchange->reused_connection = false;
    exchange->connection->socket.async_connect(
        endpoint_, [this, exchange](const error_code& error) {
          if (error) {
            transport_failure(exchange, "connect: " + error.message());
            return;
          }
          error_code ignored;
          exchange->connection->socket.set_option(tcp::no_delay(true), ignored);
          // Answers are read with non-blocking read_some (pump), woken by the read poller.
          exchange->connection->socket.non_blocking(true, ignored);
          poll_reads(*exchange->connection);
          send(exchange);
        });
  }

  void release_connection(std::unique_ptr<Connection> connection, bool keep) {
    if (connection) connection->reading = false;
    if (keep && connection && !abandoning_) {
      if (!waiting_.empty()) {
        ExchangePtr next = waiting_.front();
        waiting_.pop_front();
        next->connection = std::move(connection);
        next->reused_connection = true;
        send(next);
        return;
      }
      connection->idle_since = clock_.now();
      idle_.push_back(std::move(connection));
      return;
    }
    if (connection) {
      error_code ignored;
      connection->socket.close(ignored);
    }
    --open_connections_;
    if (!waiting_.empty() && !abandoning_) {
      ExchangePtr next = waiting_.front();
      waiting_.pop_front();
      acquire_connection(next);
    }
  }

  void send(const ExchangePtr& exchange) {
    exchange->sent = clock_.now();
    if (!exchange->retried && exchange->measured) {
      result_.send_lag_ms.record(to_ms(exchange->sent - exchange->item.spec.arrival));
    }
    asio::async_write(exchange->connection->socket, asio::buffer(exchange->request),
                      [this, exchange](const error_code& error, size_t) {
                        if (error) {
                          transport_failure(exchange, "write: " + error.message());
                          return;
                        }
                        read_answer(exchange);
                      });
  }

  // The answer is read without Beast's composed read: Asio 1.74's async_read_some tries a
  // speculative recv() before every wait (it fails with EAGAIN once per token), and a composed
  // read costs a completion handler per piece. Instead: one non-blocking read of whatever the
  // kernel has (up to kReadBytes), fed to the parser at once; a read shorter than that has
  // drained the socket, so waiting for readiness (async_wait, no syscall of its own) cannot miss
  // bytes that arrive later (epoll reports every new arrival). One recv() per wake-up.
  static constexpr size_t kReadBytes = 16 * 1024;
  // A whole answer larger than this is a broken server (a 128k-token stream is about 40 MiB).
  // Beast reserves a sized body's Content-Length up front: without a limit, one answer that
  // claims a huge length would exhaust the memory of the load generator.
  static constexpr std::uint64_t kMaxAnswerBytes = 256 * 1024 * 1024;

  void read_answer(const ExchangePtr& exchange) {
    exchange->parser.emplace();
    exchange->parser->body_limit(kMaxAnswerBytes);
    // Not eager until the header is parsed: Boost 1.74's eager put() goes on into a sized body
    // after the header's body-limit error, and reserves its length anyway (parse_buffered).
    exchange->parser->eager(false);
    Exchange* raw = exchange.get();
    // The parser keeps a reference to the callback: it lives in the exchange.
    exchange->on_chunk = [this, raw](std::uint64_t, boost::beast::string_view body,
                                     error_code&) -> std::uint64_t {
      on_stream_bytes(*raw, std::string_view(body.data(), body.size()));
      return body.size();
    };
    exchange->parser->on_chunk_body(exchange->on_chunk);
    pump(exchange);
  }

  // Reads and parses until the socket has nothing more, then waits for it to be readable, or
  // ends the exchange (answer complete, or an error). `peer_closed`: the read poller saw the
  // peer's close (EPOLLRDHUP/EPOLLHUP) with this wake-up; a short read then does not mean
  // drained, since the end of stream behind the last bytes raises no further edge: read on
  // until the end of stream is seen (a proxy that forwards a dying node's last tokens and closes
  // at once delivers both in one wake-up).
  void pump(const ExchangePtr& exchange, bool peer_closed = false) {
    Connection& connection = *exchange->connection;
    for (;;) {
      error_code error;
      const size_t bytes =
          connection.socket.read_some(connection.buffer.prepare(kReadBytes), error);
      if (error == asio::error::would_block || error == asio::error::try_again) break;
      if (error) {
        if (error == asio::error::eof) {
          // Nothing of an answer yet (a pooled connection the server closed): retried by
          // transport_failure. Beast's put_eof() would call an empty message complete.
          if (!exchange->parser->got_some()) {
            transport_failure(exchange, "read: end of stream");
            return;
          }
          error_code eof_error;
          exchange->parser->put_eof(eof_error);
          if (!eof_error && exchange->parser->is_done()) {
            on_answer(exchange);
            return;
          }
          transport_failure(exchange,
                            "read: " + (eof_error ? eof_error.message() : "end of stream"));
          return;
        }
        transport_failure(exchange, "read: " + error.message());
        return;
      }
      connection.buffer.commit(bytes);
      if (bytes > 0) exchange->got_bytes = true;
      if (!parse_buffered(exchange)) return;          // the exchange has ended
      if (bytes < kReadBytes && !peer_closed) break;  // drained
    }
    // Drained: the read poller reports the next bytes (or the peer's close).
    connection.reading = true;
    connection.reader = exchange->sequence;
  }

  // --- the read poller ----------------------------------------------------------------------
  // Every connection is in one epoll set of our own (edge-triggered, added once at connect;
  // closing the socket removes it), and only that set's descriptor waits in Asio's reactor.
  // Waiting on a socket with Asio 1.74 costs a system call per wait: async_read_some first
  // tries a speculative recv() (EAGAIN when the socket was drained), async_wait re-arms the
  // socket with epoll_ctl. Here a wake-up costs one epoll_ctl and one epoll_wait for all the
  // connections that became readable, and each of them one recv().
  void poll_reads(Connection& connection) {
    if (connection.polled) return;
    epoll_event event{};
    event.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
    event.data.u64 = connection.id;
    if (epoll_ctl(read_poller_.native_handle(), EPOLL_CTL_ADD, connection.socket.native_handle(),
                  &event) == 0) {
      connection.polled = true;
    }
  }

  void arm_read_poller() {
    read_poller_.async_wait(asio::posix::stream_descriptor::wait_read,
                            [this](const error_code& error) {
                              if (error) return;
                              on_reads_ready();
                              arm_read_poller();
                            });
  }

  void on_reads_ready() {
    constexpr int kEvents = 256;
    epoll_event events[kEvents];
    for (;;) {
      const int count = epoll_wait(read_poller_.native_handle(), events, kEvents, 0);
      for (int i = 0; i < count; ++i) {
        // epoll_event is packed on x86-64: its 8-byte field is read by value, since a reference
        // to it (find() takes one) would be misaligned.
        const uint64_t id = events[i].data.u64;
        const auto connection = connections_.find(id);
        if (connection == connections_.end() || !connection->second->reading) continue;
        const auto exchange = active_.find(connection->second->reader);
        if (exchange == active_.end()) continue;
        connection->second->reading = false;
        const ExchangePtr reader = exchange->second;  // pump may end the exchange
        pump(reader, (events[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0);
      }
      if (count < kEvents) return;
    }
  }

  // Feeds the buffered bytes to the parser. False when the exchange has ended (answered or
  // failed): the connection may then already belong to another exchange.
  bool parse_buffered(const ExchangePtr& exchange) {
    auto& parser = *exchange->parser;
    boost::beast::flat_buffer& buffer = exchange->connection->buffer;
    while (buffer.size() > 0 && !parser.is_done()) {
      error_code error;
      const size_t used = parser.put(buffer.data(), error);
      buffer.consume(used);
      // From the body on, put() goes on through the whole buffer in one call.
      if (!error && parser.is_header_done()) parser.eager(true);
      if (error == http::error::need_more) break;
      if (error) {
        transport_failure(exchange, "read: " + error.message());
        return false;
      }
      if (used == 0) break;
    }
    if (parser.is_done()) {
      on_answer(exchange);
      return false;
    }
    return true;
  }

  // --- the answer ---------------------------------------------------------------------------
  // SSE events are split from the body's bytes (sse_stream.h) and each event's data is read as
  // JSON, so that any server's spelling of the same chunk reads the same.
  void on_stream_bytes(Exchange& exchange, std::string_view bytes) {
    exchange.got_bytes = true;
    const Time now = clock_.now();
    exchange.events.feed(bytes, [&](std::string_view data) { on_event(exchange, data, now); });
  }

  void on_event(Exchange& exchange, std::string_view data, Time now) {
    const StreamChunk chunk = parse_stream_chunk(data);
    switch (chunk.kind) {
      case StreamChunk::Kind::kDone:
        exchange.saw_done = true;
        return;
      case StreamChunk::Kind::kError:
        exchange.stream_error = reason_from_code(chunk.error_code).value_or(Reason::kEngineFailed);
        return;
      case StreamChunk::Kind::kInvalid:
        ++exchange.invalid_events;
        return;
      case StreamChunk::Kind::kChunk:
        break;
    }
    // A chunk may carry a token and the finish reason at once.
    if (chunk.has_text) {
      if (!exchange.first_token) exchange.first_token = now;
      ++exchange.tokens;
    }
    if (chunk.finish_reason) {
      exchange.saw_finish = true;
      if (chunk.engine_ttft_ms) exchange.engine_ttft_ms = chunk.engine_ttft_ms;
      if (chunk.queue_ms) exchange.queue_ms = chunk.queue_ms;
      if (chunk.cached_prompt_tokens) {
        exchange.cached_prompt_tokens =
            static_cast<int32_t>(std::clamp<int64_t>(*chunk.cached_prompt_tokens, 0, INT32_MAX));
      }
    }
    if (chunk.completion_tokens) {
      exchange.usage_completion_tokens =
          static_cast<int32_t>(std::clamp<int64_t>(*chunk.completion_tokens, 0, INT32_MAX));
    }
  }

  void on_answer(const ExchangePtr& exchange) {
    const Time now = clock_.now();
    auto& response = exchange->parser->get();
    const int status = static_cast<int>(response.result_int());
    ++result_.http_status[status];
    if (status == 200 && !response.chunked()) {
      // A stream sent without chunked coding (sized, or ended by the close) arrives in the body
      // whole: its events are read now, and its tokens all count as arriving at the end.
      on_stream_bytes(*exchange, response.body());
    }
    RequestRecord record = base_record(*exchange, now);
    if (status == 200) {
      if (exchange->stream_error) {
        record.outcome = outcome_for(*exchange->stream_error);
        record.reason = *exchange->stream_error;
      } else if (exchange->events.overflowed()) {
        ++result_.transport_errors["an SSE event over 4 MiB"];
        record.outcome = Outcome::kFailed;
        record.reason = Reason::kNone;
      } else if (!exchange->saw_finish || !exchange->saw_done) {
        ++result_.transport_errors["stream ended without finish_reason and [DONE]"];
        record.outcome = Outcome::kFailed;
        record.reason = Reason::kNone;
      } else {
        record.outcome = Outcome::kCompleted;
        record.reason = Reason::kNone;
      }
    } else {
      const std::string code = error_code_of(response.body());
      const Reason reason = reason_from_code(code).value_or(
          status == 400 ? Reason::kBadRequest
                        : (status == 429 ? Reason::kRateLimited : Reason::kNoCapacity));
      record.outcome = outcome_for(reason);
      if (record.outcome == Outcome::kCompleted) record.outcome = Outcome::kFailed;
      record.reason = reason;
    }
    finish(exchange, record);
    release_connection(std::move(exchange->connection), response.keep_alive());
  }

  RequestRecord base_record(const Exchange& exchange, Time now) const {
    const RequestSpec& spec = exchange.item.spec;
    RequestRecord record;
    record.id = RequestId(exchange.sequence);
    record.model = spec.model;
    record.slo_class = spec.slo_class;
    record.tenant = spec.tenant;
    record.arrival = exchange.sent;
    record.first_token = exchange.first_token;
    record.finished = now;
    record.prompt_tokens = spec.prompt_tokens;
    record.output_tokens = exchange.usage_completion_tokens.value_or(exchange.tokens);
    record.cached_prompt_tokens = exchange.cached_prompt_tokens;
    if (exchange.queue_ms)
      record.first_scheduled = exchange.sent + ms_to_duration(*exchange.queue_ms);
    return record;
  }

  void finish(const ExchangePtr& exchange, RequestRecord& record) {
    ++finished_;
    if (record.outcome != Outcome::kCompleted) ++not_completed_;
    active_.erase(exchange->sequence);
    if (exchange->measured) measure(*exchange, record);
    check_done();
  }

  void measure(const Exchange& exchange, RequestRecord& record) {
    if (record.outcome == Outcome::kCompleted && record.first_token) {
      const SloClass& slo = scenario_.node.slo_class(record.slo_class);
      record.ttft_met = slo.ttft_met_by(*record.ttft());
      record.slo_met = slo.met_by(*record.ttft(), record.tpot());
      const double ttft_ms = to_ms(*record.ttft());
      if (exchange.engine_ttft_ms) {
        result_.engine_ttft_ms.record(*exchange.engine_ttft_ms);
        result_.server_added_ttft_ms.record(std::max(0.0, ttft_ms - *exchange.engine_ttft_ms));
      }
    }
    result_.metrics.on_finished(record);
  }

  void transport_failure(const ExchangePtr& exchange, const std::string& what) {
    if (abandoning_) return;
    // A kept-alive connection the server closed while idle: send again on a new connection
    // (not another pooled one, which the server has likely closed too).
    const bool answered = exchange->got_bytes || (exchange->parser && exchange->parser->got_some());
    if (exchange->reused_connection && !answered && !exchange->retried) {
      exchange->retried = true;
      release_connection(std::move(exchange->connection), false);
      exchange->parser.reset();
      acquire_connection(exchange, /*fresh=*/true);
      return;
    }
    ++result_.transport_errors[what];
    RequestRecord record = base_record(*exchange, clock_.now());
    record.outcome = Outcome::kFailed;
    record.reason = Reason::kNone;
    finish(exchange, record);
    release_connection(std::move(exchange->connection), false);
  }

  void abandon_all() {
    abandoning_ = true;
    const Time now = clock_.now();
    for (auto& [sequence, exchange] : active_) {
      RequestRecord record = base_record(*exchange, now);
      record.outcome = Outcome::kCancelled;
      record.reason = Reason::kDriverStopped;
      if (exchange->measured) result_.metrics.on_finished(record);
      if (exchange->connection) {
        error_code ignored;
        exchange->connection->socket.close(ignored);
      }
    }
    active_.clear();
    waiting_.clear();
    stop();
  }

  void check_done() {
    if (sending_done_ && active_.empty()) stop();
  }

  void stop() {
    error_code ignored;
    for (auto& connection : idle_) connection->socket.close(ignored);
    idle_.clear();
    arrival_timer_.cancel();
    drain_timer_.cancel();
    progress_timer_.cancel();
    error_code ignored_too;
    read_poller_.cancel(ignored_too);
    io_.stop();
  }

  // --- progress -----------------------------------------------------------------------------
  void arm_progress() {
    progress_timer_.expires_after(std::chrono::milliseconds(500));
    progress_timer_.async_wait([this](const error_code& error) {
      if (error) return;
      print_progress();
      arm_progress();
    });
  }

  void print_progress() {
    const double elapsed = std::min(to_seconds(clock_.now() - Time::zero()), result_.window_s);
    const double fraction = result_.window_s > 0 ? elapsed / result_.window_s : 1.0;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(fraction * kWidth + 0.5);
    const StreamingHistogram& ttft = result_.metrics.total().ttft_ms();
    *options_.progress << fmt::format(
        "\r[{}{}] {:5.1f}/{:.0f} s  sent {}  done {}  active {}  not ok {}  TTFT p99 {:.1f} ms   ",
        std::string(filled, '#'), std::string(kWidth - filled, '.'), elapsed, result_.window_s,
        result_.sent, finished_, active_.size(), not_completed_, ttft.quantile(0.99));
    options_.progress->flush();
  }

  const Scenario& scenario_;
  RequestSource& source_;
  LoadOptions options_;
  LoadResult result_;
  asio::io_context io_{1};
  WallClock clock_;
  tcp::endpoint endpoint_;
  std::vector<std::string> model_json_;
  std::string path_;
  std::string host_header_;
  asio::steady_timer arrival_timer_;
  asio::steady_timer drain_timer_;
  asio::steady_timer progress_timer_;
  asio::posix::stream_descriptor read_poller_;  // our epoll set of every connection (reads)
  ConnectionRegistry connections_;
  uint64_t next_connection_id_ = 1;
  std::optional<WorkloadItem> next_item_;
  Time window_end_;
  bool sending_done_ = false;
  bool abandoning_ = false;
  uint64_t next_sequence_ = 0;
  int64_t finished_ = 0;
  int64_t not_completed_ = 0;
  int32_t open_connections_ = 0;
  std::deque<std::unique_ptr<Connection>> idle_;  // oldest first
  std::deque<ExchangePtr> waiting_;
  std::unordered_map<uint64_t, ExchangePtr> active_;
};

LoadGenerator::LoadGenerator(const Scenario& scenario, RequestSource& source, LoadOptions options)
    : impl_(std::make_unique<Impl>(scenario, source, std::move(options))) {}

LoadGenerator::~LoadGenerator() = default;

LoadResult LoadGenerator::run() {
  return impl_->run();
}

}  // namespace gangway
