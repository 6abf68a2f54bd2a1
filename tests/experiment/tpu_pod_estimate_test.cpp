// Pod estimates (`accel tpu estimate --model FILE --slice ... --mesh ...`):
// the schedule of one chip's ops against its collectives (asynchronous ones
// overlap the ops that do not need them, the links run one at a time), the
// HBM fit and its advice, and the command on the zoo's decoder sharded over
// a v5e-8: the collectives FSDP needs, the state sharded, remat's
// recomputation, MaxText's formula read off the model, and clear refusals.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <accel/experiment/tpu_pod_estimate.hpp>

#include "run_test_support.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace accel::experiment {
namespace {

using keras::distribution::DeviceStepAnalysis;
using keras::distribution::StepCollective;
using keras::distribution::StepEvent;
using nlohmann::json;

StepEvent op(double seconds, std::vector<int32_t> inputs_from = {}) {
  return StepEvent{.kind = StepEvent::Kind::kOp, .seconds = seconds, .inputs_from = std::move(inputs_from), .label = "op"};
}

StepEvent collective(int32_t index, std::vector<int32_t> inputs_from = {}) {
  return StepEvent{.kind = StepEvent::Kind::kCollective,
                   .collective = index,
                   .inputs_from = std::move(inputs_from),
                   .label = "collective"};
}

// Collectives of `seconds` each on the slice's links, all asynchronous or all not.
std::vector<ScheduledCollective> timed(std::vector<double> seconds, bool asynchronous) {
  std::vector<ScheduledCollective> collectives;
  for (double each : seconds) collectives.push_back({.seconds = each, .network = 0, .asynchronous = asynchronous});
  return collectives;
}

DeviceStepAnalysis program(std::vector<StepEvent> events, int collectives) {
  DeviceStepAnalysis analysis;
  analysis.events = std::move(events);
  analysis.collectives.resize(static_cast<size_t>(collectives), StepCollective{"all_gather", {}, 1, ""});
  return analysis;
}

// Each event runs once, however it became ready: a gather of a reshaped
// weight (a reshape reads nothing that takes time) moves its bytes once.
TEST(PodSchedule, EachCollectiveRunsOnce) {
  const StepEvent reshape{.kind = StepEvent::Kind::kFree, .label = "reshape"};
  const DeviceStepAnalysis analysis = program({reshape, collective(0, {0}), op(1.0, {1})}, 1);
  const PodSchedule schedule = schedule_device_step(analysis, timed({0.5}, true));
  EXPECT_DOUBLE_EQ(schedule.link_busy_seconds, 0.5);
  EXPECT_DOUBLE_EQ(schedule.step_seconds, 1.5);
}

// A weight's gather (its operand there from the start) overlaps the op
// before the one that reads it; synchronous, it runs where the program has it.
TEST(PodSchedule, AGatherOfAWeightOverlapsEarlierOps) {
  const DeviceStepAnalysis analysis = program({op(1.0), collective(0), op(1.0, {1})}, 1);
  const PodSchedule async = schedule_device_step(analysis, timed({0.5}, true));
  EXPECT_DOUBLE_EQ(async.step_seconds, 2.0);
  EXPECT_DOUBLE_EQ(async.exposed_collective_seconds, 0.0);
  EXPECT_DOUBLE_EQ(async.link_busy_seconds, 0.5);
  const PodSchedule sync = schedule_device_step(analysis, timed({0.5}, false));
  EXPECT_DOUBLE_EQ(sync.step_seconds, 2.5);
  EXPECT_DOUBLE_EQ(sync.exposed_collective_seconds, 0.5);
}

// A gradient's reduce-scatter starts when the gradient exists and overlaps
// the ops that follow, until the update that reads it.
TEST(PodSchedule, AGradientsReductionOverlapsTheRestOfTheBackwardPass) {
  // 0: the gradient (1 s), 1: its reduce-scatter, 2: another op (2 s), 3: the update (0.1 s).
  const DeviceStepAnalysis analysis = program({op(1.0), collective(0, {0}), op(2.0), op(0.1, {1})}, 1);
  EXPECT_DOUBLE_EQ(schedule_device_step(analysis, timed({0.5}, true)).step_seconds, 3.1);
  EXPECT_DOUBLE_EQ(schedule_device_step(analysis, timed({2.5}, true)).step_seconds, 3.6);  // 1 + 2.5, then the update
  EXPECT_DOUBLE_EQ(schedule_device_step(analysis, timed({0.5}, false)).step_seconds, 3.6);
}

// The batch's chain is not moved early: a reduction of the first op's result
// overlaps the independent op after it, and the op that reads the reduction
// waits for what is left of it.
TEST(PodSchedule, OpsWaitForTheCollectivesTheyReadWhileOthersRun) {
  StepEvent first = op(1.0);
  first.reads_batch = true;
  // 0: an op on the batch (1 s), 1: a reduction of it (2 s), 2: an op reading the reduction, 3: one reading op 0.
  const DeviceStepAnalysis analysis = program({first, collective(0, {0}), op(1.0, {1}), op(1.0, {0})}, 1);
  const PodSchedule schedule = schedule_device_step(analysis, timed({2.0}, true));
  EXPECT_DOUBLE_EQ(schedule.step_seconds, 4.0);  // 0-1, 1-2 beside the reduction (1-3), 3-4
  EXPECT_DOUBLE_EQ(schedule.exposed_collective_seconds, 1.0);
  EXPECT_DOUBLE_EQ(schedule_device_step(analysis, timed({2.0}, false)).step_seconds, 5.0);
}

// The links run one collective at a time: two gathers of 1 s each, read at
// the start, keep the chip waiting 2 s.
TEST(PodSchedule, CollectivesShareTheLinks) {
  const DeviceStepAnalysis analysis = program({collective(0), collective(1), op(1.0, {0, 1})}, 2);
  const PodSchedule schedule = schedule_device_step(analysis, timed({1.0, 1.0}, true));
  EXPECT_DOUBLE_EQ(schedule.step_seconds, 3.0);
  EXPECT_DOUBLE_EQ(schedule.exposed_collective_seconds, 2.0);
  EXPECT_THROW(schedule_device_step(analysis, timed({1.0}, true)), InvalidArgumentError);
  // One on the slice's links, one on the network between slices: at once.
  std::vector<ScheduledCollective> two_networks = timed({1.0, 1.0}, true);
  two_networks[1].network = 1;
  EXPECT_DOUBLE_EQ(schedule_device_step(analysis, two_networks).step_seconds, 2.0);
}

// A synchronous collective (one between slices, or a kind XLA's flags
// leave synchronous) blocks the chip: the op that does not read it waits too.
TEST(PodSchedule, ASynchronousCollectiveBlocksTheChip) {
  const DeviceStepAnalysis analysis = program({op(1.0), collective(0, {0}), op(1.0)}, 1);
  EXPECT_DOUBLE_EQ(schedule_device_step(analysis, timed({1.0}, true)).step_seconds, 2.0);
  const PodSchedule between = schedule_device_step(analysis, {{.seconds = 1.0, .network = 1, .asynchronous = false}});
  EXPECT_DOUBLE_EQ(between.step_seconds, 3.0);
  EXPECT_DOUBLE_EQ(between.exposed_collective_seconds, 1.0);
}

// Events of block calls: forward (backward = false) or backward.
StepEvent in_block(StepEvent event, int32_t block, bool backward = false) {
  event.block = block;
  event.backward = backward;
  return event;
}

// Two forward block calls, each gathering its weight (1 s) and running an
// op on it (2 s). Straight, the second gather runs under the first block's
// op; scanned, an iteration's gather can only start with its iteration, so
// each block waits for its own.
TEST(PodSchedule, ScannedBlocksGatherTheirWeightsInTheirOwnIteration) {
  const DeviceStepAnalysis analysis = program({in_block(collective(0), 1), in_block(op(2.0, {0}), 1),
                                               in_block(collective(1), 2), in_block(op(2.0, {2, 1}), 2)},
                                              2);
  const PodSchedule straight = schedule_device_step(analysis, timed({1.0, 1.0}, true));
  EXPECT_DOUBLE_EQ(straight.step_seconds, 5.0);  // 1 exposed, then 2 + 2
  const PodSchedule scanned = schedule_device_step(analysis, timed({1.0, 1.0}, true), true);
  EXPECT_DOUBLE_EQ(scanned.step_seconds, 6.0);  // (1 + 2) per iteration
  EXPECT_DOUBLE_EQ(scanned.exposed_collective_seconds, 2.0);
}

// A gradient's reduction in a backward iteration must end before the next
// iteration starts, though nothing in it reads the reduction; outside the
// loop, what reads it waits for the whole loop.
TEST(PodSchedule, AnIterationEndsWithItsCollectives) {
  // 0: block 2's gradient (1 s), 1: its reduction (3 s), 2: block 1's op (1 s), 3: the update of 1 outside.
  const DeviceStepAnalysis analysis = program({in_block(op(1.0), 2, true), in_block(collective(0, {0}), 2, true),
                                               in_block(op(1.0), 1, true), op(0.5, {1})},
                                              1);
  EXPECT_DOUBLE_EQ(schedule_device_step(analysis, timed({3.0}, true)).step_seconds, 4.5);  // 1 + 3, then the update
  EXPECT_DOUBLE_EQ(schedule_device_step(analysis, timed({3.0}, true), true).step_seconds, 5.5);  // 1 + 3, 1, 0.5
}

// While a loop runs, the chip runs only its ops: an independent op outside
// the loop does not fill the loop's wait for a gather.
TEST(PodSchedule, NothingOutsideALoopRunsWhileItRuns) {
  // 0: block 1's op (1 s), 1: block 2's gather (2 s), 2: block 2's op on it (1 s), 3: an op outside (1 s).
  const DeviceStepAnalysis analysis = program({in_block(op(1.0), 1), in_block(collective(0), 2),
                                               in_block(op(1.0, {1}), 2), op(1.0)},
                                              1);
  EXPECT_DOUBLE_EQ(schedule_device_step(analysis, timed({2.0}, true)).step_seconds, 3.0);  // the gather under 0 and 3
  const PodSchedule scanned = schedule_device_step(analysis, timed({2.0}, true), true);
  EXPECT_DOUBLE_EQ(scanned.step_seconds, 5.0);  // 1, the gather (2), 1, then the op outside
  EXPECT_DOUBLE_EQ(scanned.exposed_collective_seconds, 2.0);
}

TEST(PodMemoryFit, AdviceSaysWhatWouldFit) {
  DeviceStepAnalysis analysis;
  analysis.state_bytes = 2'000'000'000;
  analysis.planned_peak_bytes = 8'000'000'000;
  const PodMemoryFit fits = memory_fit(analysis, 16e9, 4, 256);
  EXPECT_TRUE(fits.fits);
  EXPECT_TRUE(fits.advice.empty());
  EXPECT_DOUBLE_EQ(fits.total_bytes, 10e9);
  analysis.state_bytes = 10'000'000'000;
  analysis.planned_peak_bytes = 12'000'000'000;  // 3 GB per example of the 4
  const PodMemoryFit over = memory_fit(analysis, 16e9, 4, 256);
  EXPECT_FALSE(over.fits);
  EXPECT_NE(over.advice.find("a per-chip batch of at most 2"), std::string::npos) << over.advice;
  // 4 GB left beside the step's values: 10 GB x 256 chips / 4 GB = 640 chips.
  EXPECT_NE(over.advice.find("sharded over at least 640 chips"), std::string::npos) << over.advice;
}

const std::string kAccel = ACCEL_CLI_PATH;
const std::string kDecoder = std::string(EXPERIMENT_SOURCE_DIR) + "/configs/models/decoder_lm.yaml";

json pod_estimate(const std::string& arguments) {
  const testing::CommandResult result =
      testing::run_shell(kAccel + " tpu estimate --model " + kDecoder + " --slice v5e-8 --json " + arguments);
  EXPECT_EQ(result.code, 0) << result.output;
  return json::parse(result.output, nullptr, false);
}

// The zoo's decoder (144,448 parameters) over the 8 chips of a v5e-8 under
// FSDP: every weight gathered before use, the gradients reduced, the
// weights and Adam's two slots sharded 8 ways.
TEST(PodEstimate, TheDecoderShardedOverAV5e8) {
  const json full = pod_estimate("--mesh fsdp=8 --batch 64 --remat full");
  ASSERT_TRUE(full.is_object());
  EXPECT_EQ(full["chips"], 8);
  EXPECT_EQ(full["batch_per_chip"], 8);
  bool gathered = false;
  for (const json& collective : full["collectives"]) {
    EXPECT_EQ(collective["axes"], "fsdp");
    if (collective["kind"] == "all_gather") gathered = collective["count"].get<int>() > 0;
  }
  EXPECT_TRUE(gathered) << full["collectives"].dump();
  const double parameters = full["model_flops_formula"]["N"].get<double>();
  EXPECT_EQ(parameters, 144448);
  EXPECT_EQ(full["model_flops_formula"]["L"], 2);
  EXPECT_EQ(full["model_flops_formula"]["H"], 4);
  EXPECT_EQ(full["model_flops_formula"]["hd"], 16);
  EXPECT_EQ(full["model_flops_formula"]["S"], 64);
  // Weights and two slots, float32, split 8 ways (a few small ones whole).
  const double state = full["hbm"]["state_bytes"].get<double>();
  EXPECT_LT(state, 3 * 4 * parameters / 8 * 1.2);
  EXPECT_GE(state, 3 * 4 * parameters / 8);
  EXPECT_TRUE(full["hbm"]["fits"].get<bool>());
  EXPECT_GE(full["step_seconds"].get<double>(), full["compute_seconds"].get<double>());
  EXPECT_GT(full["ops_recomputed"].get<int>(), 0);
  // The reduce-scatters' sums run on the chip: 3 x 7/8 of their bytes through HBM at 819 GB/s.
  double summing = 0;
  for (const json& collective : full["collectives"]) {
    const double expected = collective["kind"] == "reduce_scatter" || collective["kind"] == "all_reduce"
                                ? 3.0 * 7 / 8 * collective["bytes"].get<double>() / 819e9
                                : 0.0;
    EXPECT_NEAR(collective["chip_seconds"].get<double>(), expected, 1e-9 + 1e-9 * expected) << collective.dump();
    summing += expected;
  }
  EXPECT_GT(summing, 0);
  EXPECT_NEAR(full["summing_seconds"].get<double>(), summing, 1e-9 + 1e-6 * summing);
  EXPECT_NEAR(full["shares"]["reduction_sums"].get<double>(), summing / full["step_seconds"].get<double>(), 1e-9);
  const json none = pod_estimate("--mesh fsdp=8 --batch 64 --remat none");
  EXPECT_EQ(none["ops_recomputed"], 0);
  EXPECT_LT(none["hardware_flops_per_chip"].get<double>(), full["hardware_flops_per_chip"].get<double>());
  const json sync = pod_estimate("--mesh fsdp=8 --batch 64 --remat full --async-collectives none");
  EXPECT_GT(sync["step_seconds"].get<double>(), full["step_seconds"].get<double>());
  EXPECT_DOUBLE_EQ(sync["compute_seconds"].get<double>(), full["compute_seconds"].get<double>());
  // FSDP x tensor parallel: the batch split 2 ways, the heads, MLP units and
  // vocabulary 4 ways; the row-parallel outputs all-reduced over tensor.
  const json tensor = pod_estimate("--mesh fsdp=2,tensor=4 --batch 64 --remat full");
  bool reduced_over_tensor = false;
  for (const json& collective : tensor["collectives"]) {
    if (collective["kind"] == "all_reduce" && collective["axes"] == "tensor") reduced_over_tensor = true;
  }
  EXPECT_TRUE(reduced_over_tensor) << tensor["collectives"].dump();
  EXPECT_LT(tensor["hbm"]["state_bytes"].get<double>(), 3 * 4 * parameters / 4);
  // Two slices over the data-center network: the same chip program, each
  // gradient shard also all-reduced between the slices.
  const json two = pod_estimate("--mesh fsdp=8 --batch 128 --slices 2 --remat full");
  EXPECT_EQ(two["slices"], 2);
  EXPECT_EQ(two["batch_per_chip"], 8);
  // The ops are the same; only the sums of the all-reduces between slices are added.
  EXPECT_NEAR(two["compute_seconds"].get<double>() - two["summing_seconds"].get<double>(),
              full["compute_seconds"].get<double>() - full["summing_seconds"].get<double>(), 1e-12);
  EXPECT_GT(two["summing_seconds"].get<double>(), full["summing_seconds"].get<double>());
  bool between_slices = false;
  for (const json& collective : two["collectives"]) {
    if (collective["axes"] == "slices (DCN)") between_slices = collective["count"].get<int>() > 0;
  }
  EXPECT_TRUE(between_slices) << two["collectives"].dump();
  EXPECT_GE(two["link_busy_seconds"].get<double>(), full["link_busy_seconds"].get<double>());
  // A sweep of a preset field re-estimates the pod per value.
  const json sweep = pod_estimate("--mesh fsdp=8 --batch 64 --sweep core.mxu.rows=64,128");
  ASSERT_EQ(sweep["points"].size(), 2u) << sweep.dump();
  EXPECT_GT(sweep["points"][1]["model_tflops_per_chip"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(sweep["points"][1]["step_seconds"].get<double>(),
                   pod_estimate("--mesh fsdp=8 --batch 64")["step_seconds"].get<double>());
  // A chip too small: the estimate says so and what would make it fit.
  const json tight = pod_estimate("--mesh fsdp=8 --batch 64 --remat none --set hbm.capacity_bytes=2MiB");
  EXPECT_FALSE(tight["hbm"]["fits"].get<bool>());
  const std::string advice = tight["hbm"]["advice"].get<std::string>();
  EXPECT_NE(advice.find("per-chip batch of at most"), std::string::npos) << advice;
  EXPECT_NE(advice.find("--remat full"), std::string::npos) << advice;
  // Data parallel: the weights whole on every chip.
  const json data = pod_estimate("--mesh data=8 --batch 64");
  EXPECT_GT(data["hbm"]["state_bytes"].get<double>(), 3 * 4 * parameters * 0.99);
}

// The command line's pod is the file's: --slice, --mesh, --remat and --batch
// give what the file's sections do.
TEST(PodEstimate, FlagsGiveWhatTheFilesSectionsDo) {
  const std::string file = std::string(EXPERIMENT_SOURCE_DIR) + "/configs/models/maxtext/16b.yaml";
  const testing::CommandResult from_file = testing::run_shell(kAccel + " tpu estimate --model " + file + " --json");
  const testing::CommandResult from_flags = testing::run_shell(
      kAccel + " tpu estimate --model " + file +
      " --slice v5e-256 --mesh fsdp=256 --remat full --batch 1536 --json --model-set training.remat=none");
  ASSERT_EQ(from_file.code, 0) << from_file.output;
  ASSERT_EQ(from_flags.code, 0) << from_flags.output;
  EXPECT_EQ(json::parse(from_file.output)["step_seconds"], json::parse(from_flags.output)["step_seconds"]);
  // The file's distribution section says which collectives are asynchronous
  // and whether the layers are scanned; the flags override it.
  const std::string section =
      " --model-set 'distribution.async_collectives=[all_gather, reduce_scatter]' --model-set distribution.scan_layers=false";
  const testing::CommandResult from_section = testing::run_shell(kAccel + " tpu estimate --model " + file + section + " --json");
  ASSERT_EQ(from_section.code, 0) << from_section.output;
  EXPECT_EQ(json::parse(from_section.output)["async_collectives"], json::array({"all_gather", "reduce_scatter"}));
  EXPECT_FALSE(json::parse(from_section.output)["scan_layers"].get<bool>());
  const testing::CommandResult overridden = testing::run_shell(kAccel + " tpu estimate --model " + file + section +
                                                               " --async-collectives none --scan-layers on --json");
  ASSERT_EQ(overridden.code, 0) << overridden.output;
  EXPECT_EQ(json::parse(overridden.output)["async_collectives"], json::array());
  EXPECT_TRUE(json::parse(overridden.output)["scan_layers"].get<bool>());
}

// A slice of more chips than the 1024 devices a plugin may list: the pod
// estimate lists one (tpu_sim.devices=first), the system keeps its chips.
TEST(PodEstimate, ASliceOfThousandsOfChips) {
  const testing::CommandResult result = testing::run_shell(
      kAccel + " tpu estimate --model " + kDecoder + " --slice v5p-4096 --megacore --mesh data=2048 --batch 2048 --json");
  ASSERT_EQ(result.code, 0) << result.output;
  const json estimate = json::parse(result.output);
  EXPECT_EQ(estimate["chips"], 2048);
  EXPECT_EQ(estimate["system"]["devices"], 1);
  EXPECT_GT(estimate["link_busy_seconds"].get<double>(), 0.0);
}

// Which collectives overlap the ops: the runs' XLA flags (all-gathers by
// default), and the decoder's blocks as a scan's iterations.
TEST(PodEstimate, AsynchronousKindsAndScannedBlocksDecideWhatOverlaps) {
  const json gathers = pod_estimate("--mesh fsdp=8 --batch 64 --remat full");
  EXPECT_EQ(gathers["async_collectives"], json::array({"all_gather"}));
  EXPECT_TRUE(gathers["scan_layers"].get<bool>());
  const json all = pod_estimate("--mesh fsdp=8 --batch 64 --remat full --async-collectives all");
  const json none = pod_estimate("--mesh fsdp=8 --batch 64 --remat full --async-collectives none");
  EXPECT_EQ(all["async_collectives"].size(), 4u);
  EXPECT_LE(all["step_seconds"].get<double>(), gathers["step_seconds"].get<double>());
  EXPECT_LT(gathers["step_seconds"].get<double>(), none["step_seconds"].get<double>());
  // The same ops and the same collectives, each run once, scheduled otherwise.
  for (const json* estimate : {&all, &none}) {
    EXPECT_DOUBLE_EQ((*estimate)["compute_seconds"].get<double>(), gathers["compute_seconds"].get<double>());
    EXPECT_NEAR((*estimate)["link_busy_seconds"].get<double>(), gathers["link_busy_seconds"].get<double>(), 1e-15);
  }
  // The file names no blocks: scanning changes nothing.
  const json straight = pod_estimate("--mesh fsdp=8 --batch 64 --remat full --scan-layers off");
  EXPECT_DOUBLE_EQ(straight["step_seconds"].get<double>(), gathers["step_seconds"].get<double>());
  // Its two decoder blocks as a scan: the same ops, scheduled otherwise
  // (PodSchedule's tests check the loop's rules one by one).
  const std::string blocks = " --model-set 'training.remat_blocks=^(block\\d+)_'";
  const json scanned_blocks = pod_estimate("--mesh fsdp=8 --batch 64 --remat full" + blocks);
  const json straight_blocks = pod_estimate("--mesh fsdp=8 --batch 64 --remat full --scan-layers off" + blocks);
  EXPECT_DOUBLE_EQ(scanned_blocks["compute_seconds"].get<double>(), straight_blocks["compute_seconds"].get<double>());
  EXPECT_NEAR(scanned_blocks["link_busy_seconds"].get<double>(), straight_blocks["link_busy_seconds"].get<double>(), 1e-15);
  EXPECT_NE(scanned_blocks["step_seconds"].get<double>(), straight_blocks["step_seconds"].get<double>());
}

TEST(PodEstimate, RefusalsNameWhatIsWrong) {
  const auto refused = [](const std::string& arguments, const std::string& expected) {
    const testing::CommandResult result =
        testing::run_shell(kAccel + " tpu estimate --model " + kDecoder + " --slice v5e-8 " + arguments);
    EXPECT_EQ(result.code, 2) << arguments;
    EXPECT_NE(result.output.find(expected), std::string::npos) << arguments << "\n" << result.output;
  };
  refused("--mesh model=8 --batch 64", "axis 'model'");
  refused("--mesh tensor=8 --batch 64", "no mesh axis splits the batch");
  refused("--mesh fsdp=2,data=4 --batch 64", "keep one");
  refused("--mesh fsdp=4 --batch 64", "4 devices, but the slice has 8 chips");
  refused("--mesh fsdp=8 --batch 60", "--batch 60");
  refused("--mesh fsdp=x", "--mesh 'fsdp=x'");
  refused("--mesh fsdp=8 --values compute", "--values none");
  refused("--mesh fsdp=8 --batch 64 --slices 3", "3 slices");
  // The run's batch (the decoder file's 32) is the global one: the message says what to pass.
  refused("--mesh fsdp=8 --slices 3", "--batch 96 gives each slice 32");
  refused("--mesh fsdp=8 --batch 64 --async-collectives all_gather,gather", "'gather' is not a collective");
  refused("--mesh fsdp=8 --batch 64 --scan-layers maybe", "--scan-layers");
  // A v5p publishes no network between slices.
  const testing::CommandResult v5p = testing::run_shell(
      kAccel + " tpu estimate --model " + kDecoder + " --slice v5p-8 --megacore --mesh fsdp=4 --batch 64 --slices 2");
  EXPECT_EQ(v5p.code, 2);
  EXPECT_NE(v5p.output.find("dcn_bandwidth_bytes_per_s"), std::string::npos) << v5p.output;
  // A v4 chip is two TensorCores: the mesh is laid on chips, one device each.
  const testing::CommandResult v4 =
      testing::run_shell(kAccel + " tpu estimate --model " + kDecoder + " --slice v4-8 --mesh fsdp=4 --batch 64");
  EXPECT_EQ(v4.code, 2);
  EXPECT_NE(v4.output.find("use --megacore"), std::string::npos) << v4.output;
}

// MaxText's v5e-256 rows (docs/tpu-emulator.md, "Fidelity: MaxText on
// v5e-256"), one slice and 16 joined by the data-center network: the files
// hold the published models (their parameter counts within the one untied
// logits kernel of MaxText's), the estimate is what the table says, and the
// table's error is against the published figure. A row within its bound
// (15 %) must stay within it; the table says which are not yet and why.
TEST(PodEstimate, MaxTextRowsAreWhatTheTableSays) {
  std::ifstream doc(std::string(EXPERIMENT_SOURCE_DIR) + "/docs/tpu-emulator.md");
  // "16B, v5e-256" or "16B, 16x v5e-256" -> published, estimated, error %, bound %
  std::map<std::string, std::vector<double>> table;
  for (std::string line; std::getline(doc, line);) {
    if (!line.starts_with("| MaxText ")) continue;
    const size_t second_comma = line.find(',', line.find(',') + 1);
    const std::string key = line.substr(10, second_comma - 10);
    std::vector<double> figures;
    std::stringstream cells(line);
    std::string cell;
    std::getline(cells, cell, '|');
    std::getline(cells, cell, '|');  // the row's name
    for (int column = 0; column < 4 && std::getline(cells, cell, '|'); ++column) {
      figures.push_back(std::stod(cell.substr(cell.find_first_of("+-0123456789"))));
    }
    table[key] = figures;
  }
  struct Row {
    const char* size;
    const char* file;
    int batch;          // one slice's
    double parameters;  // MaxText's, [D] in the reference
  };
  for (int slices : {1, 16}) {
    for (const Row& row : {Row{"16B", "16b.yaml", 1536, 16.3e9}, Row{"32B", "32b.yaml", 1024, 32.5e9},
                          Row{"64B", "64b.yaml", 512, 64.8e9}}) {
      const std::string key = std::string(row.size) + (slices == 1 ? ", v5e-256" : ", 16x v5e-256");
      SCOPED_TRACE(key);
      ASSERT_TRUE(table.contains(key));
      const std::vector<double>& figures = table[key];
      ASSERT_EQ(figures.size(), 4u);
      const std::string file = std::string(EXPERIMENT_SOURCE_DIR) + "/configs/models/maxtext/" + row.file;
      // The file's own pod (tpu: {preset: tpu_v5e}, distribution: {mesh: {fsdp: 256}}, training.remat,
      // data.batch), and the same pod 16 times over the data-center network.
      const std::string multislice =
          slices == 1 ? "" : fmt::format(" --slices {} --batch {}", slices, slices * row.batch);
      const testing::CommandResult result =
          testing::run_shell(kAccel + " tpu estimate --model " + file + multislice + " --json");
      ASSERT_EQ(result.code, 0) << result.output;
      const json estimate = json::parse(result.output);
      EXPECT_EQ(estimate["chips"], 256);
      EXPECT_EQ(estimate["slices"], slices);
      EXPECT_EQ(estimate["mesh"], "fsdp=256");
      EXPECT_EQ(estimate["remat"], "full");
      EXPECT_EQ(estimate["async_collectives"], json::array({"all_gather"}));  // the runs' XLA flags
      EXPECT_TRUE(estimate["scan_layers"].get<bool>());                        // MaxText's default
      const double parameters = estimate["model_flops_formula"]["N"].get<double>();
      EXPECT_NEAR(parameters / row.parameters, 1.0, 0.02);
      EXPECT_EQ(estimate["model_flops_formula"]["S"], 2048);
      EXPECT_EQ(estimate["batch_per_chip"].get<int>() * 256, row.batch);
      const double tflops = estimate["model_tflops_per_chip"].get<double>();
      // Within 0.5 %: builds by different compilers round the cycle model's
      // floating point differently (0.07 % on the 64B between g++ and clang).
      EXPECT_NEAR(tflops, figures[1], 0.005 * figures[1]) << "docs/tpu-emulator.md's estimate";
      const double error = 100.0 * (tflops / figures[0] - 1.0);
      EXPECT_NEAR(error, figures[2], 0.6) << "docs/tpu-emulator.md's error";
      // A row within its bound stays within it.
      if (std::abs(figures[2]) <= figures[3]) EXPECT_LE(std::abs(error), figures[3]);
    }
  }
}

}  // namespace
}  // namespace accel::experiment
