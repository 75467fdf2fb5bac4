// Reads a trace file one row at a time, in any supported format, into one neutral row type.
//
// Never loads the whole file: one line is held at a time. Each reader checks its rows and throws
// InputError::at(path, line, column or key, "expected ...") for the first malformed one: a wrong
// column count, a non-number, a bad timestamp, a time before the previous row's, a missing key.
// Times are re-based to the file's first row.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "workload/trace/trace_spec.h"

namespace gangway {

struct TraceRow {
  int64_t index = 0;    // 0-based among the file's data rows (skipped failures included)
  int line = 0;         // 1-based line in the file
  int64_t time_ns = 0;  // since the file's first row
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;
  std::string trace_model;          // burstgpt's Model column; empty otherwise
  std::vector<uint64_t> block_ids;  // mooncake's hash_ids; empty otherwise
};

class TraceRowReader {
 public:
  virtual ~TraceRowReader() = default;
  // The next usable row; false at the end of the file.
  virtual bool next(TraceRow& row) = 0;

  const std::string& path() const { return path_; }
  // Rows the format marks as failed requests (burstgpt: Response tokens == 0), skipped.
  int64_t failed_rows() const { return failed_rows_; }
  // Data rows read so far, failures included.
  int64_t rows_read() const { return next_index_; }

 protected:
  explicit TraceRowReader(std::string path);

  // The next non-blank line without its line ending (and without a UTF-8 byte order mark on the
  // first line); false at the end of the file.
  bool read_line(std::string& line);
  int line_number() const { return line_number_; }
  // Turns an absolute time into time since the first row, checking that time never goes back.
  int64_t relative_time(int64_t absolute_ns, const std::string& key);
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

  std::string path_;
  std::ifstream in_;
  int line_number_ = 0;
  int64_t next_index_ = 0;
  int64_t failed_rows_ = 0;
  bool have_first_time_ = false;
  int64_t first_time_ns_ = 0;
  int64_t last_time_ns_ = 0;
};

// Opens spec.path in spec.format; InputError if it cannot be opened or its header is wrong.
std::unique_ptr<TraceRowReader> open_trace_rows(const TraceSpec& spec);

}  // namespace gangway
