// CollectiveGroup before it joins: a host that does not resolve fails at
// once with getaddrinfo's reason, naming the host and its task, whoever it
// belongs to; never after the join timeout.
#include <accel/distribute/collective_group.hpp>
#include <accel/distribute/simple_cluster_resolver.hpp>
#include <accel/error.hpp>

#include <gtest/gtest.h>

#include <chrono>

namespace accel::distribute {
namespace {

using namespace std::chrono_literals;

// Joins as `task_index` of `workers` with a join timeout far above the test's bound.
void expect_fails_at_once(const std::vector<std::string>& workers, int task_index, const std::string& expected) {
  const SimpleClusterResolver resolver(ClusterSpec({{"worker", workers}}), "worker", task_index);
  const auto started = std::chrono::steady_clock::now();
  try {
    CollectiveGroup group(resolver, CollectiveOptions{60s});
    ADD_FAILURE() << "joined a group with an unresolvable host";
  } catch (const UnavailableError& error) {
    EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
}

TEST(CollectiveGroupAddresses, AnUnresolvablePeerFailsAtOnceNamingHostAndTask) {
  expect_fails_at_once({"127.0.0.1:1", "no-such-host.invalid:2222"}, 0,
                       "cannot resolve host 'no-such-host.invalid' of worker 1 (no-such-host.invalid:2222): ");
}

TEST(CollectiveGroupAddresses, AnUnresolvableRendezvousHostFailsAtOnce) {
  expect_fails_at_once({"no-such-host.invalid:2222", "127.0.0.1:1"}, 1,
                       "cannot resolve host 'no-such-host.invalid' of worker 0");
}

}  // namespace
}  // namespace accel::distribute
