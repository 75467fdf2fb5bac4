// The trace replay (TraceSource over a TraceRowReader) on an arbitrary file of one format: it
// must replay it or throw InputError naming the file, line and column, never crash or throw
// anything else. The readers read files, so each input is written to a file of this process's
// own first.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "core/input_error.h"
#include "workload/trace/trace_source.h"

namespace gangway::fuzz {

inline int replay_trace(const uint8_t* data, size_t size, TraceFormat format) {
  static const std::string path = "/tmp/gangway-fuzz-trace-" + std::to_string(::getpid()) + "." +
                                  std::string(to_string(format));
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  TraceSpec spec;
  spec.path = path;
  spec.format = format;
  try {
    TraceSource source(spec, /*seed=*/1);
    for (int i = 0; i < 100000; ++i) {
      if (!source.next()) break;
    }
  } catch (const InputError&) {
    // A malformed trace, reported as such.
  }
  return 0;
}

}  // namespace gangway::fuzz
