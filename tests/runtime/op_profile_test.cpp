// How the host reads the op profiles plugins send through report_op: a 1.0
// plugin's struct (no name fields) keeps its detail, and a 1.1 profile with
// a name is recorded as that work (a plugin's collective), not as an op.
#include <accel/accel.hpp>
#include <accel/profiler.hpp>

#include <gtest/gtest.h>

#include <cstddef>

#include "runtime/host_api.hpp"
#include "runtime/logical_device.hpp"

namespace accel {
namespace {

// The CPU device's host context: what its plugin passes back to report_op.
void* cpu_host_context() {
  DeviceScope scope("/CPU:0");
  return ops::zeros(Shape{1}).storage()->device;
}

std::vector<profiler::OpRecord> report(const AccelOpProfile& profile) {
  void* context = cpu_host_context();
  profiler::start();
  detail::host_api()->report_op(context, &profile);
  profiler::stop();
  return profiler::records();
}

TEST(OpProfile, APluginBuiltFor1_0KeepsItsDetail) {
  AccelOpProfile profile{};
  profile.struct_size = offsetof(AccelOpProfile, name);  // the 1.0 struct
  profile.sequence = 7;
  profile.op = ACCEL_OP_MATMUL;
  profile.time_source = ACCEL_TIME_DEVICE;
  profile.duration_seconds = 0.5;
  profile.detail_json = R"({"tiles":4})";
  const std::vector<profiler::OpRecord> records = report(profile);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].op, "MatMul");
  EXPECT_EQ(records[0].sequence, 7u);
  EXPECT_EQ(records[0].detail_json, R"({"tiles":4})");
}

TEST(OpProfile, ANamedProfileIsRecordedAsThatWork) {
  AccelOpProfile profile{};
  profile.struct_size = sizeof(AccelOpProfile);
  profile.sequence = 9;
  profile.op = ACCEL_OP_COUNT;  // no op: ignored for named work
  profile.time_source = ACCEL_TIME_DEVICE;
  profile.start_seconds = 1.25;
  profile.duration_seconds = 0.002;
  profile.bytes_accessed = 4096;
  profile.name = "AllReduce";
  profile.category = "collective";
  const std::vector<profiler::OpRecord> records = report(profile);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].op, "AllReduce");
  EXPECT_EQ(records[0].category, "collective");
  EXPECT_EQ(records[0].sequence, 0u);
  EXPECT_EQ(records[0].time_source, profiler::TimeSource::kDevice);
  EXPECT_EQ(records[0].start_seconds, 1.25);
  EXPECT_EQ(records[0].bytes_accessed, 4096);
  EXPECT_NE(records[0].device.find("CPU:0"), std::string::npos) << records[0].device;
}

TEST(OpProfile, ElapsedSecondsRunsFromStart) {
  profiler::start();
  const double first = profiler::elapsed_seconds();
  const double second = profiler::elapsed_seconds();
  profiler::stop();
  EXPECT_GE(first, 0.0);
  EXPECT_GE(second, first);
}

}  // namespace
}  // namespace accel
