#include "trace_reader_fuzzer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return gangway::fuzz::replay_trace(data, size, gangway::TraceFormat::azure);
}
