// `accel tpu estimate`: the request runner and the CLI11 wiring.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <sstream>

#include "tpu_estimate_command.hpp"

namespace accel::cli {
namespace {

struct Result {
  int code;
  std::string out, err;
};

Result run(TpuEstimateRequest request) {
  std::ostringstream out, err;
  const int code = run_tpu_estimate(request, out, err);
  return {code, out.str(), err.str()};
}

TEST(TpuEstimateCommand, ScaleSimJsonCyclesAreScaleSims) {
  TpuEstimateRequest request;
  request.array = "8x8";
  request.dataflow = "ws";
  request.scalesim = true;
  request.json = true;
  request.op = "conv2d";
  request.dims = {1, 28, 28, 1, 32, 3, 3};
  const Result result = run(request);
  ASSERT_EQ(result.code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["cycles"], 5583);
  EXPECT_EQ(json["scalesim"]["total_cycles"], 5583);
  EXPECT_DOUBLE_EQ(json["scalesim"]["mapping_efficiency"].get<double>(), 0.5625);
  EXPECT_EQ(json["gemm"]["m"], 676);
}

TEST(TpuEstimateCommand, GemmTable) {
  TpuEstimateRequest request;
  request.op = "gemm";
  request.dims = {1024, 1024, 1024};
  const Result result = run(request);
  ASSERT_EQ(result.code, 0) << result.err;
  for (const char* row : {"cycles", "simulated time", "ms", "MXU utilization", "HBM bytes", "bound"}) {
    EXPECT_NE(result.out.find(row), std::string::npos) << row << "\n" << result.out;
  }
}

TEST(TpuEstimateCommand, EnergyWhenThePresetHasFigures) {
  TpuEstimateRequest request;
  request.op = "gemm";
  request.dims = {128, 128, 128};
  request.json = true;
  const auto v4 = nlohmann::json::parse(run(request).out);  // tpu_v4: J21's 7 nm figures
  EXPECT_DOUBLE_EQ(v4["energy"]["mac_j"].get<double>(), 128.0 * 128 * 128 * 0.59e-12);
  EXPECT_DOUBLE_EQ(v4["energy"]["hbm_j"].get<double>(), v4["hbm_bytes"].get<double>() * 43.75e-12);
  request.preset = "tpu_v5e";
  EXPECT_TRUE(nlohmann::json::parse(run(request).out)["energy"].is_null());
  request.json = false;
  EXPECT_NE(run(request).out.find("n/a (the preset has no energy figures)"), std::string::npos);
}

TEST(TpuEstimateCommand, ErrorsExitWithTwo) {
  TpuEstimateRequest request;
  request.op = "gemm";
  request.dims = {1, 2};
  EXPECT_EQ(run(request).code, 2);
  request.dims = {1, 2, 3};
  request.array = "12by4";
  Result result = run(request);
  EXPECT_EQ(result.code, 2);
  EXPECT_NE(result.err.find("--array"), std::string::npos);
  request.array.reset();
  request.preset = "tpu_v99";
  result = run(request);
  EXPECT_EQ(result.code, 2);
  EXPECT_NE(result.err.find("tpu_v4"), std::string::npos) << result.err;
}

// `collective KIND BYTES --axis N`: one axis of the preset's slice; a kind
// or an axis that is not there is named.
TEST(TpuEstimateCommand, CollectiveAlongAnAxis) {
  TpuEstimateRequest request;
  request.op = "collective";
  request.preset = "tpu_v5e";
  request.overrides = {"chips=64", "interconnect.dims=[4,16]"};
  request.collective = "all_gather";
  request.dims = {33554432};
  request.json = true;
  Result result = run(request);
  ASSERT_EQ(result.code, 0) << result.err;
  const nlohmann::json line = nlohmann::json::parse(result.out);
  EXPECT_EQ(line["chips"], 4);
  EXPECT_EQ(line["wraparound"], false);
  EXPECT_EQ(line["steps"], 3);
  request.axis = 1;
  const nlohmann::json ring = nlohmann::json::parse(run(request).out);
  EXPECT_EQ(ring["wraparound"], true);
  request.axis = 2;
  result = run(request);
  EXPECT_EQ(result.code, 2);
  EXPECT_NE(result.err.find("--axis 2: expected 0 to 1"), std::string::npos) << result.err;
  request.axis = 0;
  request.collective = "gather_all";
  result = run(request);
  EXPECT_EQ(result.code, 2);
  EXPECT_NE(result.err.find("collective 'gather_all'"), std::string::npos) << result.err;
}

TEST(TpuEstimateCommand, AnAllReduceWhoseCyclesDoNotFitIsAnError) {
  TpuEstimateRequest request;
  request.op = "allreduce";
  request.dims = {9000000000000000000};
  request.json = true;
  EXPECT_EQ(run(request).code, 0) << "9e18 bytes over tpu_v4's links still fit";
  request.overrides = {"interconnect.link_bandwidth_bytes_per_s=1e6"};
  const Result slow = run(request);
  EXPECT_EQ(slow.code, 2);
  EXPECT_NE(slow.err.find("allreduce BYTES = 9000000000000000000: the all-reduce's cycles does not fit a 64-bit count"),
            std::string::npos)
      << slow.err;
}

// A size too large to time is refused naming the sizes the user gave, not
// only the timing model's internal count that overflowed.
TEST(TpuEstimateCommand, SizesTooLargeToTimeAreNamed) {
  TpuEstimateRequest request;
  request.op = "vector";
  request.vector_kind = "adam";
  request.dims = {4198888888888888888};
  Result result = run(request);
  EXPECT_EQ(result.code, 2);
  EXPECT_NE(result.err.find("vector ELEMENTS = 4198888888888888888: "), std::string::npos) << result.err;
  request.op = "gemm";
  request.dims = {4198888888888, 88888888, 8888888};
  result = run(request);
  EXPECT_EQ(result.code, 2);
  EXPECT_NE(result.err.find("gemm M N K = 4198888888888 88888888 8888888: M x N does not fit"), std::string::npos)
      << result.err;
}

TEST(TpuEstimateCommand, RegistersOnTheApp) {
  CLI::App app("accel");
  add_tpu_command(app);
  testing::internal::CaptureStdout();
  app.parse("tpu estimate --preset tpu_v5e --array 16x16 --dataflow os --ideal-memory --json gemm 64 64 64", false);
  const std::string out = testing::internal::GetCapturedStdout();
  const auto json = nlohmann::json::parse(out);
  EXPECT_EQ(json["preset"], "tpu_v5e");
  EXPECT_EQ(json["dataflow"], "os");
  EXPECT_EQ(json["array"], "16x16");
  EXPECT_GT(json["cycles"].get<long>(), 0);
}

// A value out of an option's range is refused while parsing, naming the
// option (accel's main exits with 2 for every parse error); one the command
// itself refuses is a RuntimeError of code 2.
TEST(TpuEstimateCommand, CliErrorIsExitCodeTwo) {
  CLI::App app("accel");
  add_tpu_command(app);
  try {
    app.parse("tpu estimate --dataflow xs gemm 8 8 8", false);
    FAIL();
  } catch (const CLI::ValidationError& error) {
    EXPECT_NE(std::string(error.what()).find("--dataflow"), std::string::npos) << error.what();
  }
  CLI::App other("accel");
  add_tpu_command(other);
  testing::internal::CaptureStderr();
  try {
    other.parse("tpu estimate --array 16by16 gemm 8 8 8", false);
    FAIL();
  } catch (const CLI::RuntimeError& error) {
    EXPECT_EQ(error.get_exit_code(), 2);
  }
  EXPECT_NE(testing::internal::GetCapturedStderr().find("--array"), std::string::npos);
}

}  // namespace
}  // namespace accel::cli
