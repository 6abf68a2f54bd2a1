// ClusterSpec lookups and "host:port" splitting.
#include <accel/distribute/cluster_spec.hpp>
#include <accel/error.hpp>

#include <gtest/gtest.h>

namespace accel::distribute {
namespace {

TEST(ClusterSpec, AnswersJobsTasksAndAddresses) {
  const ClusterSpec cluster({{"chief", {"c:1"}}, {"worker", {"w:1", "w:2"}}});
  EXPECT_EQ(cluster.job_names(), (std::vector<std::string>{"chief", "worker"}));
  EXPECT_EQ(cluster.num_tasks("worker"), 2);
  EXPECT_EQ(cluster.num_tasks("ps"), 0);
  EXPECT_EQ(cluster.task_address("worker", 1), "w:2");
  EXPECT_THROW(cluster.task_address("worker", 2), OutOfRangeError);
  EXPECT_THROW(cluster.job_tasks("ps"), NotFoundError);
  EXPECT_EQ(cluster.to_json(), R"({"chief":["c:1"],"worker":["w:1","w:2"]})");
}

TEST(ClusterSpec, SplitsHostAndPort) {
  EXPECT_EQ(split_host_port("node01:2222").host, "node01");
  EXPECT_EQ(split_host_port("node01:2222").port, 2222);
  EXPECT_EQ(split_host_port("[::1]:80").host, "::1");
  EXPECT_THROW(split_host_port("node01"), InvalidArgumentError);
  EXPECT_THROW(split_host_port("node01:http"), InvalidArgumentError);
  EXPECT_THROW(split_host_port("node01:70000"), InvalidArgumentError);
}

TEST(ClusterSpec, SplitsBracketedIpv6Addresses) {
  EXPECT_EQ(split_host_port("[::1]:2222").port, 2222);
  EXPECT_EQ(split_host_port("[fe80::1%eth0]:2222").host, "fe80::1%eth0");
  EXPECT_EQ(split_host_port("[2001:db8::7]:65535").host, "2001:db8::7");
}

// Each bad address, and the words its error must contain.
TEST(ClusterSpec, BadAddressesSayWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {"node01", "the port is missing"},
      {"node01:", "the port must be a number in 1..65535"},
      {"[::1]", "the port is missing"},
      {"[::1]2222", "expected ':' and the port"},
      {"[::1:2222", "never closed"},
      {"[node01]:2222", "only an IPv6 address"},
      {"::1:2222", "an IPv6 address needs brackets"},
      {":2222", "the host is empty"},
      {"[]:2222", "only an IPv6 address"},
      {"node01:0", "1..65535"},
      {"node01:+80", "1..65535"},
      {"node01:-1", "1..65535"},
      {"node01: 80", "1..65535"},
      {"node01:99999999999", "1..65535"},
      {"no de:80", "a character no host name has"},
  };
  for (const auto& [address, expected] : cases) {
    try {
      split_host_port(address);
      ADD_FAILURE() << "accepted " << address;
    } catch (const InvalidArgumentError& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << address << ": " << error.what();
      EXPECT_NE(std::string(error.what()).find(address), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace accel::distribute
