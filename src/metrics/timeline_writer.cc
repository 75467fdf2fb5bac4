#include "metrics/timeline_writer.h"

#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>
#include <string>

namespace gangway {

namespace {

// Length of the well-formed UTF-8 sequence starting at text[at], or 0 if it is malformed
// (overlong forms, surrogates and code points past U+10FFFF are malformed too).
std::size_t utf8_sequence_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  std::size_t length = 0;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;  // overlong
    if (lead == 0xED) second_max = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;  // overlong
    if (lead == 0xF4) second_max = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  if (byte(at + 1) < second_min || byte(at + 1) > second_max) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) return 0;
  }
  return length;
}

void write_args(std::ostream& out, const nlohmann::json& args) {
  out << args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void require_object(const nlohmann::json* args, const char* what) {
  if (args != nullptr && !args->is_object()) {
    throw std::invalid_argument(std::string("TimelineWriter: ") + what + " must be a JSON object");
  }
}

}  // namespace

void write_json_string(std::ostream& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.put('"');
  std::size_t plain_from = 0;  // start of the run of bytes that need no escaping
  const auto flush_plain = [&](std::size_t until) {
    if (until > plain_from) out.write(text.data() + plain_from, until - plain_from);
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const std::size_t length = utf8_sequence_length(text, i);
      if (length > 0) {
        i += length;
        continue;
      }
    }
    flush_plain(i);
    switch (c) {
      case '"':
        out << "\\\"";
        break;
      case '\\':
        out << "\\\\";
        break;
      case '\b':
        out << "\\b";
        break;
      case '\f':
        out << "\\f";
        break;
      case '\n':
        out << "\\n";
        break;
      case '\r':
        out << "\\r";
        break;
      case '\t':
        out << "\\t";
        break;
      default:
        if (c < 0x20) {
          const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
          out.write(escaped, sizeof(escaped));
        } else {
          out << "\\ufffd";  // a byte that does not start well-formed UTF-8
        }
    }
    ++i;
    plain_from = i;
  }
  flush_plain(text.size());
  out.put('"');
}

void write_microseconds(std::ostream& out, int64_t ns) {
  // Unsigned arithmetic so that INT64_MIN has a magnitude.
  uint64_t magnitude = static_cast<uint64_t>(ns);
  if (ns < 0) {
    out.put('-');
    magnitude = ~magnitude + 1;
  }
  const uint64_t fraction = magnitude % 1000;
  out << magnitude / 1000;
  const char decimals[] = {'.', static_cast<char>('0' + fraction / 100),
                           static_cast<char>('0' + fraction / 10 % 10),
                           static_cast<char>('0' + fraction % 10)};
  out.write(decimals, sizeof(decimals));
}

TimelineWriter::TimelineWriter(std::ostream& out, int gpu_count, std::string_view process_name)
    : out_(out), gpu_count_(gpu_count) {
  if (gpu_count < 1) {
    throw std::invalid_argument("TimelineWriter: gpu_count must be at least 1, got " +
                                std::to_string(gpu_count));
  }
  out_ << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
  write_metadata(node_thread_id(), "process_name", "name", std::string(process_name));
  write_metadata(node_thread_id(), "thread_name", "name", "node");
  write_metadata(node_thread_id(), "thread_sort_index", "sort_index", 0);
  for (int gpu = 0; gpu < gpu_count_; ++gpu) {
    const int thread_id = gpu_thread_id(GpuId(static_cast<GpuId::rep_type>(gpu)));
    write_metadata(thread_id, "thread_name", "name", "GPU " + std::to_string(gpu));
    write_metadata(thread_id, "thread_sort_index", "sort_index", gpu + 1);
  }
}

TimelineWriter::~TimelineWriter() {
  try {
    close();
  } catch (...) {
    // A destructor must not throw; a failing stream is the owner's to notice.
  }
}

void TimelineWriter::close() {
  if (closed_) return;
  closed_ = true;
  out_ << "\n]}\n";
  out_.flush();
}

void TimelineWriter::set_window(Time start, Time end) {
  if (end <= start) {
    throw std::invalid_argument("TimelineWriter: the window must end after it starts");
  }
  windowed_ = true;
  window_start_ = start;
  window_end_ = end;
}

void TimelineWriter::require_open() const {
  if (closed_) throw std::logic_error("TimelineWriter: write after close()");
}

int TimelineWriter::checked_gpu_thread(GpuId gpu) const {
  if (gpu.value() >= gpu_count_) {
    throw std::out_of_range("TimelineWriter: no GPU " + std::to_string(gpu.value()) + " (of " +
                            std::to_string(gpu_count_) + ")");
  }
  return gpu_thread_id(gpu);
}

void TimelineWriter::begin_event(std::string_view name, char phase, int thread_id) {
  out_ << (events_written_ == 0 ? "\n" : ",\n") << "{\"name\":";
  write_json_string(out_, name);
  out_ << ",\"ph\":\"" << phase << "\",\"pid\":" << kProcessId << ",\"tid\":" << thread_id;
  ++events_written_;
}

void TimelineWriter::end_event(const nlohmann::json* args) {
  if (args != nullptr) {
    out_ << ",\"args\":";
    write_args(out_, *args);
  }
  out_ << '}';
}

void TimelineWriter::write_metadata(int thread_id, std::string_view kind, std::string_view key,
                                    const nlohmann::json& value) {
  const nlohmann::json args = {{std::string(key), value}};
  begin_event(kind, 'M', thread_id);
  end_event(&args);
}

void TimelineWriter::write_span(int thread_id, std::string_view name, std::string_view category,
                                Time start, Time end, const nlohmann::json* args) {
  require_open();
  if (end < start) {
    throw std::invalid_argument("TimelineWriter: span '" + std::string(name) + "' ends at " +
                                std::to_string(end.ns()) + " ns, before its start " +
                                std::to_string(start.ns()) + " ns");
  }
  require_object(args, "span args");
  if (!in_window(start, end)) return;
  begin_event(name, 'X', thread_id);
  out_ << ",\"cat\":";
  write_json_string(out_, category);
  out_ << ",\"ts\":";
  write_microseconds(out_, start.ns());
  out_ << ",\"dur\":";
  write_microseconds(out_, (end - start).count());
  end_event(args);
}

void TimelineWriter::write_instant(int thread_id, char scope, std::string_view name, Time at,
                                   const nlohmann::json* args) {
  require_open();
  require_object(args, "instant args");
  if (!in_window(at, at)) return;
  begin_event(name, 'i', thread_id);
  out_ << ",\"s\":\"" << scope << "\",\"ts\":";
  write_microseconds(out_, at.ns());
  end_event(args);
}

void TimelineWriter::span(GpuId gpu, std::string_view name, std::string_view category, Time start,
                          Time end, const nlohmann::json* args) {
  write_span(checked_gpu_thread(gpu), name, category, start, end, args);
}

void TimelineWriter::span(NodeWide, std::string_view name, std::string_view category, Time start,
                          Time end, const nlohmann::json* args) {
  write_span(node_thread_id(), name, category, start, end, args);
}

void TimelineWriter::span_on_gpus(std::span<const GpuId> gpus, std::string_view name,
                                  std::string_view category, Time start, Time end,
                                  const nlohmann::json* args) {
  // Check every GPU first, so a bad id writes nothing rather than part of the gang.
  for (GpuId gpu : gpus) checked_gpu_thread(gpu);
  for (GpuId gpu : gpus) span(gpu, name, category, start, end, args);
}

void TimelineWriter::span_on_all_gpus(std::string_view name, std::string_view category, Time start,
                                      Time end, const nlohmann::json* args) {
  for (int gpu = 0; gpu < gpu_count_; ++gpu) {
    span(GpuId(static_cast<GpuId::rep_type>(gpu)), name, category, start, end, args);
  }
}

void TimelineWriter::instant(GpuId gpu, std::string_view name, Time at,
                             const nlohmann::json* args) {
  write_instant(checked_gpu_thread(gpu), 't', name, at, args);
}

void TimelineWriter::instant(NodeWide, std::string_view name, Time at, const nlohmann::json* args) {
  write_instant(node_thread_id(), 'p', name, at, args);
}

void TimelineWriter::counter(std::string_view name, Time at, const nlohmann::json& values) {
  require_open();
  require_object(&values, "counter values");
  for (const auto& [key, value] : values.items()) {
    if (!value.is_number()) {
      throw std::invalid_argument("TimelineWriter: counter '" + std::string(name) + "' value '" +
                                  key + "' is not a number");
    }
  }
  if (!in_window(at, at)) return;
  begin_event(name, 'C', node_thread_id());
  out_ << ",\"ts\":";
  write_microseconds(out_, at.ns());
  end_event(&values);
}

}  // namespace gangway
