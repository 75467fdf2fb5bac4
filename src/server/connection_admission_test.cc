#include "server/connection_admission.h"

#include <gtest/gtest.h>

namespace gangway {
namespace {

using boost::asio::ip::make_address;

ServerConfig limits(int32_t max, int32_t per_client, int32_t reserve) {
  ServerConfig config;
  config.max_connections = max;
  config.max_connections_per_client = per_client;
  config.probe_reserve_connections = reserve;
  return config;
}

TEST(ConnectionAdmissionTest, OverTheNodeLimitConnectionsGoToTheReserveThenAreRefused) {
  ConnectionAdmission admission(limits(2, 100, 5));
  const auto a = make_address("10.0.0.1");
  const auto b = make_address("10.0.0.2");
  EXPECT_EQ(admission.admit(a), ConnectionClass::kServed);
  EXPECT_EQ(admission.admit(b), ConnectionClass::kServed);
  // Each address may hold kReservePerClient of the reserve.
  for (int i = 0; i < ConnectionAdmission::kReservePerClient; ++i) {
    EXPECT_EQ(admission.admit(a), ConnectionClass::kReserveNodeFull);
  }
  EXPECT_EQ(admission.admit(a), ConnectionClass::kRefused);
  EXPECT_EQ(admission.admit(b), ConnectionClass::kReserveNodeFull);  // the 5th reserve slot
  EXPECT_EQ(admission.admit(make_address("10.0.0.3")), ConnectionClass::kRefused);
  EXPECT_EQ(admission.served(), 2);
  EXPECT_EQ(admission.reserved(), 5);
  // A served connection that closes frees its slot.
  admission.release(a, ConnectionClass::kServed);
  EXPECT_EQ(admission.admit(make_address("10.0.0.3")), ConnectionClass::kServed);
  admission.release(b, ConnectionClass::kReserveNodeFull);
  EXPECT_EQ(admission.reserved(), 4);
}

TEST(ConnectionAdmissionTest, OneAddressOverItsLimitDoesNotStopTheOthers) {
  ConnectionAdmission admission(limits(100, 2, 10));
  const auto greedy = make_address("::1");
  EXPECT_EQ(admission.admit(greedy), ConnectionClass::kServed);
  EXPECT_EQ(admission.admit(greedy), ConnectionClass::kServed);
  EXPECT_EQ(admission.admit(greedy), ConnectionClass::kReserveClientFull);
  EXPECT_EQ(admission.admit(make_address("::2")), ConnectionClass::kServed);
  admission.release(greedy, ConnectionClass::kServed);
  EXPECT_EQ(admission.admit(greedy), ConnectionClass::kServed);
}

TEST(ConnectionAdmissionTest, NoReserveMeansRefused) {
  ConnectionAdmission admission(limits(1, 10, 0));
  const auto a = make_address("127.0.0.1");
  EXPECT_EQ(admission.admit(a), ConnectionClass::kServed);
  EXPECT_EQ(admission.admit(a), ConnectionClass::kRefused);
}

}  // namespace
}  // namespace gangway
