#include "http/response_text.h"

#include <gtest/gtest.h>

#include <string>

namespace gangway {
namespace {

TEST(ResponseText, AResponseHeadCarriesItsLengthTypeAndExtraHeaders) {
  std::string out = "left";
  append_response_head(out, 429, "gangway", "application/json", 17, "Retry-After: 2\r\n", true);
  EXPECT_EQ(out,
            "leftHTTP/1.1 429 Too Many Requests\r\nServer: gangway\r\nContent-Type: "
            "application/json\r\nContent-Length: 17\r\nRetry-After: 2\r\n\r\n");
}

TEST(ResponseText, AResponseHeadWithoutAContentTypeOrKeepAliveSaysConnectionClose) {
  std::string out;
  append_response_head(out, 200, "gangway-engine", "", 0, "", false);
  EXPECT_EQ(out,
            "HTTP/1.1 200 OK\r\nServer: gangway-engine\r\nContent-Length: 0\r\nConnection: "
            "close\r\n\r\n");
}

TEST(ResponseText, AnEventStreamHeadNamesTheRequestOnlyWhenGivenAnId) {
  std::string with_id;
  append_event_stream_head(with_id, "gangway", "cmpl-7", true);
  EXPECT_EQ(with_id,
            "HTTP/1.1 200 OK\r\nServer: gangway\r\nContent-Type: text/event-stream; "
            "charset=utf-8\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n"
            "X-Request-Id: cmpl-7\r\n\r\n");
  std::string without;
  append_event_stream_head(without, "gangway-engine", "", false);
  EXPECT_EQ(without.find("X-Request-Id"), std::string::npos);
  EXPECT_TRUE(without.ends_with("Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"));
}

TEST(ResponseText, ChunksAreFramedInHexAndAnEmptyOneIsNotWritten) {
  std::string out;
  append_chunk(out, std::string(26, 'x'));
  EXPECT_EQ(out, "1a\r\n" + std::string(26, 'x') + "\r\n");
  append_chunk(out, "");
  EXPECT_EQ(out.size(), 4u + 26u + 2u);  // an empty chunk would have ended the body
  EXPECT_EQ(kLastChunk, "0\r\n\r\n");
}

}  // namespace
}  // namespace gangway
