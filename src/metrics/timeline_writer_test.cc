#include "metrics/timeline_writer.h"

#include <gtest/gtest.h>

#include <array>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gangway {
namespace {

Time at_ns(int64_t ns) {
  return Time::from_ns(ns);
}

std::vector<nlohmann::json> events_with_phase(const nlohmann::json& trace, const char* phase) {
  std::vector<nlohmann::json> found;
  for (const nlohmann::json& event : trace["traceEvents"]) {
    if (event["ph"] == phase) found.push_back(event);
  }
  return found;
}

std::string thread_name(const nlohmann::json& trace, int thread_id) {
  for (const nlohmann::json& event : trace["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "thread_name" && event["tid"] == thread_id) {
      return event["args"]["name"].get<std::string>();
    }
  }
  return "";
}

std::string microseconds_text(int64_t ns) {
  std::ostringstream out;
  write_microseconds(out, ns);
  return out.str();
}

std::string escaped(std::string_view text) {
  std::ostringstream out;
  write_json_string(out, text);
  return out.str();
}

TEST(TimelineWriter, EmptyTraceParsesAndNamesEveryTrack) {
  std::ostringstream out;
  { TimelineWriter writer(out, 8); }  // the destructor closes
  const nlohmann::json trace = nlohmann::json::parse(out.str());
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  ASSERT_TRUE(trace["traceEvents"].is_array());
  bool named_process = false;
  for (const nlohmann::json& event : events_with_phase(trace, "M")) {
    if (event["name"] == "process_name") {
      named_process = event["args"]["name"] == "gangway node";
      EXPECT_EQ(event["pid"], TimelineWriter::kProcessId);
    }
  }
  EXPECT_TRUE(named_process);
  for (int gpu = 0; gpu < 8; ++gpu) {
    EXPECT_EQ(thread_name(trace, TimelineWriter::gpu_thread_id(GpuId(gpu))),
              "GPU " + std::to_string(gpu));
  }
  EXPECT_EQ(thread_name(trace, 9), "node");
}

TEST(TimelineWriter, SpansAreCompleteEventsInMicrosecondsWithNanosecondDecimals) {
  std::ostringstream out;
  TimelineWriter writer(out, 2);
  const nlohmann::json args = {{"batch", 12}, {"tokens", 512}};
  writer.span(GpuId(1), "sm iteration", "sm", at_ns(1'234'567), at_ns(1'244'568), &args);
  writer.close();

  EXPECT_NE(out.str().find("\"ts\":1234.567,\"dur\":10.001"), std::string::npos) << out.str();
  const nlohmann::json trace = nlohmann::json::parse(out.str());
  const auto spans = events_with_phase(trace, "X");
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0]["name"], "sm iteration");
  EXPECT_EQ(spans[0]["cat"], "sm");
  EXPECT_EQ(spans[0]["pid"], TimelineWriter::kProcessId);
  EXPECT_EQ(spans[0]["tid"], TimelineWriter::gpu_thread_id(GpuId(1)));
  EXPECT_DOUBLE_EQ(spans[0]["ts"].get<double>(), 1234.567);
  EXPECT_DOUBLE_EQ(spans[0]["dur"].get<double>(), 10.001);
  EXPECT_EQ(spans[0]["args"], args);
}

TEST(TimelineWriter, GangSpanGoesToEveryGpuTrack) {
  std::ostringstream out;
  TimelineWriter writer(out, 8);
  writer.span_on_all_gpus("lm iteration", "lm", at_ns(0), at_ns(30'000'000));
  const std::array<GpuId, 2> pair = {GpuId(2), GpuId(5)};
  writer.span_on_gpus(pair, "pair", "sm", at_ns(0), at_ns(1000));
  writer.close();
  const nlohmann::json trace = nlohmann::json::parse(out.str());
  std::vector<int> lm_threads;
  std::vector<int> pair_threads;
  for (const nlohmann::json& span : events_with_phase(trace, "X")) {
    (span["name"] == "lm iteration" ? lm_threads : pair_threads).push_back(span["tid"]);
  }
  EXPECT_EQ(lm_threads, (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(pair_threads, (std::vector<int>{3, 6}));
}

TEST(TimelineWriter, InstantsAndCounters) {
  std::ostringstream out;
  TimelineWriter writer(out, 8);
  const nlohmann::json lease = {{"horizon_ms", 40}};
  writer.instant(kNodeWide, "lease start", at_ns(5'000), &lease);
  writer.instant(GpuId(3), "engine failed", at_ns(7'000));
  writer.span(kNodeWide, "lease", "lease", at_ns(5'000), at_ns(45'000));
  writer.counter("queue", at_ns(9'000), {{"sm", 4}, {"lm", 1}});
  writer.close();
  const nlohmann::json trace = nlohmann::json::parse(out.str());

  const auto instants = events_with_phase(trace, "i");
  ASSERT_EQ(instants.size(), 2u);
  EXPECT_EQ(instants[0]["name"], "lease start");
  EXPECT_EQ(instants[0]["s"], "p");
  EXPECT_EQ(instants[0]["args"]["horizon_ms"], 40);
  EXPECT_DOUBLE_EQ(instants[0]["ts"].get<double>(), 5.0);
  EXPECT_EQ(instants[1]["s"], "t");
  EXPECT_EQ(instants[1]["tid"], TimelineWriter::gpu_thread_id(GpuId(3)));

  const auto spans = events_with_phase(trace, "X");
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0]["tid"], writer.node_thread_id());

  const auto counters = events_with_phase(trace, "C");
  ASSERT_EQ(counters.size(), 1u);
  EXPECT_EQ(counters[0]["args"]["sm"], 4);
}

TEST(TimelineWriter, NamesAreEscaped) {
  const std::string tricky = "say \"hi\"\\ \n\t\x01 caf\xc3\xa9 \xe2\x82\xac bad\xff end";
  std::ostringstream out;
  TimelineWriter writer(out, 1, "node \"A\"");
  writer.span(GpuId(0), tricky, "cat\"egory", at_ns(0), at_ns(1));
  writer.close();
  const nlohmann::json trace = nlohmann::json::parse(out.str());
  const auto spans = events_with_phase(trace, "X");
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0]["name"], "say \"hi\"\\ \n\t\x01 caf\xc3\xa9 \xe2\x82\xac bad\xef\xbf\xbd end");
  EXPECT_EQ(spans[0]["cat"], "cat\"egory");

  EXPECT_EQ(escaped("a\"b"), "\"a\\\"b\"");
  EXPECT_EQ(escaped("\x1f"), "\"\\u001f\"");
  EXPECT_EQ(escaped("\xc3"), "\"\\ufffd\"");                        // truncated sequence
  EXPECT_EQ(escaped("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // a surrogate
  EXPECT_EQ(escaped("\xf0\x9f\x99\x82"), "\"\xf0\x9f\x99\x82\"");   // four-byte UTF-8 kept
}

TEST(TimelineWriter, MicrosecondsKeepEveryNanosecond) {
  EXPECT_EQ(microseconds_text(0), "0.000");
  EXPECT_EQ(microseconds_text(1), "0.001");
  EXPECT_EQ(microseconds_text(999), "0.999");
  EXPECT_EQ(microseconds_text(1'000), "1.000");
  EXPECT_EQ(microseconds_text(3'600'000'000'123), "3600000000.123");
  EXPECT_EQ(microseconds_text(-1'500), "-1.500");
  EXPECT_EQ(microseconds_text(std::numeric_limits<int64_t>::min()), "-9223372036854775.808");
}

TEST(TimelineWriter, RejectsBadCallsAndWritesAfterClose) {
  std::ostringstream out;
  TimelineWriter writer(out, 8);
  const nlohmann::json not_an_object = nlohmann::json::array({1, 2});
  EXPECT_THROW(writer.span(GpuId(8), "x", "c", at_ns(0), at_ns(1)), std::out_of_range);
  EXPECT_THROW(writer.span(GpuId(0), "x", "c", at_ns(2), at_ns(1)), std::invalid_argument);
  EXPECT_THROW(writer.span(GpuId(0), "x", "c", at_ns(0), at_ns(1), &not_an_object),
               std::invalid_argument);
  EXPECT_THROW(writer.counter("q", at_ns(0), {{"depth", "deep"}}), std::invalid_argument);
  const std::array<GpuId, 2> one_bad = {GpuId(0), GpuId(9)};
  EXPECT_THROW(writer.span_on_gpus(one_bad, "x", "c", at_ns(0), at_ns(1)), std::out_of_range);
  const uint64_t metadata_events = writer.events_written();
  writer.close();
  writer.close();                                       // idempotent
  EXPECT_EQ(writer.events_written(), metadata_events);  // nothing half-written
  EXPECT_THROW(writer.instant(kNodeWide, "late", at_ns(5)), std::logic_error);
  EXPECT_TRUE(nlohmann::json::accept(out.str()));
  EXPECT_THROW(TimelineWriter(out, 0), std::invalid_argument);
}

TEST(TimelineWriter, AWindowKeepsOnlyEventsThatReachIntoIt) {
  std::ostringstream out;
  {
    TimelineWriter writer(out, 1);
    writer.set_window(at_ns(1000), at_ns(2000));
    const GpuId gpu(0);
    writer.span(gpu, "before", "sm", at_ns(0), at_ns(999));      // ends before: left out
    writer.span(gpu, "across", "sm", at_ns(500), at_ns(1500));   // overlaps: kept whole
    writer.span(gpu, "inside", "sm", at_ns(1200), at_ns(1300));  // kept
    writer.span(gpu, "after", "sm", at_ns(2000), at_ns(2100));   // starts at the end: out
    writer.instant(kNodeWide, "early", at_ns(10));
    writer.instant(kNodeWide, "in", at_ns(1500));
    writer.counter("queued", at_ns(3000), {{"small", 1}});
    writer.counter("queued", at_ns(1999), {{"small", 2}});
    EXPECT_THROW(writer.set_window(at_ns(5), at_ns(5)), std::invalid_argument);
  }
  const nlohmann::json trace = nlohmann::json::parse(out.str());
  std::vector<std::string> spans;
  for (const nlohmann::json& event : events_with_phase(trace, "X")) spans.push_back(event["name"]);
  EXPECT_EQ(spans, (std::vector<std::string>{"across", "inside"}));
  ASSERT_EQ(events_with_phase(trace, "i").size(), 1u);
  EXPECT_EQ(events_with_phase(trace, "i")[0]["name"], "in");
  ASSERT_EQ(events_with_phase(trace, "C").size(), 1u);
  EXPECT_EQ(events_with_phase(trace, "C")[0]["args"]["small"], 2);
}

}  // namespace
}  // namespace gangway
