// The scenario loader on arbitrary text: it must accept it or throw InputError (one clear
// message), never crash, hang or throw anything else. A scenario that loads also has its
// workload drawn for a few requests, since the loader's checks are what keep the generators'
// parameters sane.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "config/scenario.h"
#include "config/scenario_source.h"
#include "core/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const gangway::Scenario scenario = gangway::parse_scenario(text, "fuzz.yaml");
    const std::unique_ptr<gangway::RequestSource> source = gangway::make_request_source(scenario);
    for (int i = 0; i < 64; ++i) {
      if (!source->next()) break;
    }
  } catch (const gangway::InputError&) {
    // Bad input, reported as such: what the loader must do.
  }
  return 0;
}
