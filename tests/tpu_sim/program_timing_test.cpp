// Whole programs in the timing library: a chain of MXU ops with its
// activations kept on chip and the next op's weights prefetched
// (timing/program_timing), checked against J17's published TPU v1
// throughput read from the fidelity table (configs/tpu/fidelity).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "timing/config_error.hpp"
#include "timing/fidelity_table.hpp"
#include "timing/presets.hpp"
#include "timing/program_timing.hpp"

namespace accel::tpu {
namespace {

Hardware preset(const std::string& name, std::vector<FieldOverride> overrides = {}) {
  return load_system(SystemSelection{.preset_or_file = name, .overrides = std::move(overrides)});
}

FidelityTable j17() { return load_fidelity_table(find_fidelity_table("j17_tpu_v1")); }

TEST(FidelityTable, J17HoldsTheWorkloadsWithTheirPublishedFigures) {
  const FidelityTable table = j17();
  EXPECT_EQ(table.preset, "tpu_v1");
  EXPECT_NE(table.source.find("J17"), std::string::npos);
  for (const char* name : {"MLP0", "MLP1", "CNN0"}) {
    const FidelityWorkload& w = table.workload(name);
    EXPECT_GT(w.published_tops, 0) << name;
    EXPECT_GT(w.tolerance, 0) << name;
    EXPECT_GT(w.layers * w.batch, 0) << name;
  }
  EXPECT_EQ(table.workload("MLP0").layers, 5);
  EXPECT_EQ(table.workload("MLP0").weights, 20'000'000);
  EXPECT_EQ(table.workload("MLP0").batch, 200);
  // Equal square layers: MLP0 is 5 x (2000 x 2000), CNN0 16 x (3 x 3 x 236 x 236).
  EXPECT_EQ(layer_width(table.workload("MLP0")), 2000);
  EXPECT_EQ(layer_width(table.workload("MLP1")), 1118);
  EXPECT_EQ(layer_width(table.workload("CNN0")), 236);
  EXPECT_THROW(table.workload("LSTM9"), std::out_of_range);
}

TEST(FidelityTable, ABrokenTableNamesTheKey) {
  const std::string path = ::testing::TempDir() + "/broken_fidelity.yaml";
  std::ofstream(path) << "source: x\npreset: tpu_v1\nworkloads:\n  - name: A\n    kind: dense\n    layers: 2\n"
                         "    weights: 10\n    batch: 3\n    tolerance: 0.1\n";
  try {
    load_fidelity_table(path);
    FAIL() << "a workload without published_tops loaded";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.key(), "workloads[0].published_tops");
    EXPECT_EQ(error.file(), path);
  }
  std::ofstream(path) << "source: x\npreset: tpu_v1\nworkloads:\n  - name: A\n    kind: lstm\n";
  EXPECT_THROW(load_fidelity_table(path), ConfigError);
  EXPECT_THROW(find_fidelity_table("no_such_table"), ConfigError);
}

// The bound: each workload of the table, run as one compiled
// program on its preset, within the table's tolerance of the published TOPS.
TEST(ProgramTiming, J17WorkloadsMatchThePublishedThroughput) {
  const FidelityTable table = j17();
  const TimingModel model(preset(table.preset));
  for (const FidelityWorkload& w : table.workloads) {
    const std::vector<OpTiming> chain = workload_chain(model, w);
    const ProgramTiming program = time_program(model, chain);
    const ProgramTiming eager = time_program(model, chain, ProgramPolicy::eager());
    const ProgramTiming no_prefetch = time_program(model, chain, {.activations_on_chip = true, .prefetch_weights = false});
    const double tops = program.ops_per_s() / 1e12;
    const double error = tops / w.published_tops - 1;
    std::printf("%s (%lld layers of width %lld): published %.1f TOPS, program %.2f (no prefetch %.2f), "
                "op-by-op %.2f, error %+.1f%%, MXU utilization %.1f%%\n",
                w.name.c_str(), static_cast<long long>(w.layers), static_cast<long long>(layer_width(w)),
                w.published_tops, tops, no_prefetch.ops_per_s() / 1e12, eager.ops_per_s() / 1e12, 100 * error,
                100 * tops * 1e12 / peak_ops_per_s_per_chip(model.hardware()));
    EXPECT_LE(std::fabs(error), w.tolerance) << w.name << ": " << tops << " TOPS emulated, " << w.published_tops
                                             << " published (" << table.source << ")";
    EXPECT_GE(program.ops_per_s(), eager.ops_per_s()) << w.name;
    EXPECT_EQ(program.useful_macs, eager.useful_macs);
  }
}

TEST(ProgramTiming, EagerPolicyIsEachOpAlone) {
  const TimingModel model(preset("tpu_v1"));
  const std::vector<OpTiming> chain = workload_chain(model, j17().workload("MLP1"));
  const ProgramTiming eager = time_program(model, chain, ProgramPolicy::eager());
  std::int64_t cycles = 0, bytes = 0;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    EXPECT_EQ(eager.steps[i].timing.cycles, chain[i].cycles);
    EXPECT_EQ(eager.steps[i].timing.hbm_bytes, chain[i].hbm_bytes);
    EXPECT_FALSE(eager.steps[i].input_from_vmem);
    EXPECT_EQ(eager.steps[i].prefetched_bytes, 0);
    cycles += chain[i].cycles;
    bytes += chain[i].hbm_bytes;
  }
  EXPECT_EQ(eager.cycles, cycles);
  EXPECT_EQ(eager.hbm_bytes, bytes);
}

TEST(ProgramTiming, ActivationsThatFitStayOnChip) {
  const Hardware hw = preset("tpu_v1");
  const TimingModel model(hw);
  const std::vector<OpTiming> chain = workload_chain(model, j17().workload("MLP0"));
  const ProgramTiming program = time_program(model, chain, {.activations_on_chip = true, .prefetch_weights = false});
  ASSERT_EQ(program.steps.size(), 5u);
  for (std::size_t i = 0; i < program.steps.size(); ++i) {
    const ProgramStep& step = program.steps[i];
    const bool first = i == 0, last = i + 1 == program.steps.size();
    EXPECT_EQ(step.input_from_vmem, !first) << i;
    EXPECT_EQ(step.output_kept_on_chip, !last) << i;
    EXPECT_EQ(step.timing.hbm.input, first ? chain[i].hbm.input : 0) << i;
    EXPECT_EQ(step.timing.hbm.output, last ? chain[i].hbm.output : 0) << i;
    EXPECT_EQ(step.timing.hbm.weights, chain[i].hbm.weights) << i;  // weights still stream from DDR3
    EXPECT_EQ(step.timing.mxu_cycles, chain[i].mxu_cycles) << i;
  }
  // An activation larger than half the buffer goes through HBM.
  const std::int64_t half = hw.core.vmem_bytes / 2;
  const std::int64_t rows = half / 2048 + 8;  // rows x 2048 int8 bytes > half the unified buffer
  const std::vector<OpTiming> big = {model.estimate_matmul(rows, 2048, 256, NumberType::kInt8),
                                     model.estimate_matmul(rows, 256, 2048, NumberType::kInt8)};
  const ProgramTiming spilled = time_program(model, big);
  EXPECT_FALSE(spilled.steps[0].output_kept_on_chip);
  EXPECT_FALSE(spilled.steps[1].input_from_vmem);
  EXPECT_EQ(spilled.steps[1].timing.hbm.input, big[1].hbm.input);
}

// A compute-bound op (long batch, small weights) leaves HBM idle; the next
// op's weights load then, so its weight-load stall disappears. Eagerly each
// op loads its own weights and waits for the first tile.
TEST(ProgramTiming, PrefetchHidesTheNextOpsWeightLoad) {
  const TimingModel model(preset("tpu_v4"));
  const std::vector<OpTiming> chain = {model.estimate_matmul(65536, 512, 512, NumberType::kBf16),
                                       model.estimate_matmul(65536, 512, 512, NumberType::kBf16)};
  ASSERT_GT(chain[1].stall_cycles, 0);
  const ProgramPolicy keep_only{.activations_on_chip = true, .prefetch_weights = false};
  const ProgramTiming without = time_program(model, chain, keep_only);
  const ProgramTiming with = time_program(model, chain);
  const ProgramTiming eager = time_program(model, chain, ProgramPolicy::eager());
  EXPECT_GT(without.steps[1].timing.stall_cycles, 0);
  EXPECT_GT(eager.steps[1].timing.stall_cycles, 0);
  EXPECT_EQ(with.steps[1].timing.stall_cycles, 0);
  EXPECT_EQ(with.steps[1].hidden_stall_cycles, without.steps[1].timing.stall_cycles);
  EXPECT_EQ(with.steps[1].prefetched_bytes, chain[1].hbm.weights);
  EXPECT_EQ(with.steps[1].timing.cycles, chain[1].compute_cycles);
  EXPECT_EQ(with.steps[1].timing.hbm_bytes, without.steps[1].timing.hbm_bytes);  // loaded earlier, not skipped
  EXPECT_EQ(with.steps[0].prefetched_bytes, 0);  // nothing runs before the first op
  EXPECT_LT(with.cycles, without.cycles);
}

// A weight-streaming chain (TPU v1's MLPs) keeps HBM busy all the time:
// there is no idle time to prefetch into, and the program is its weight bytes
// over the bandwidth.
TEST(ProgramTiming, PrefetchCannotBeatABusyMemory) {
  const Hardware hw = preset("tpu_v1");
  const TimingModel model(hw);
  const std::vector<OpTiming> chain = workload_chain(model, j17().workload("MLP0"));
  const ProgramTiming with = time_program(model, chain);
  const ProgramTiming without = time_program(model, chain, {.activations_on_chip = true, .prefetch_weights = false});
  EXPECT_EQ(with.cycles, without.cycles);
  for (const ProgramStep& step : with.steps) EXPECT_EQ(step.timing.bound, Bound::kMemory);
  const double bytes_per_cycle = hw.hbm.bandwidth_bytes_per_s / hw.clock_hz;
  EXPECT_NEAR(static_cast<double>(with.cycles), static_cast<double>(with.hbm_bytes) / bytes_per_cycle,
              static_cast<double>(with.steps.size()));
}

// TPU v4's CMEM (128 MiB per chip, 64 MiB per core): an activation too large
// for half a core's 16 MiB VMEM but within its CMEM share stays on chip; on
// v5e (no CMEM) or with CMEM off it goes through HBM.
TEST(ProgramTiming, CmemKeepsWhatVmemCannot) {
  const auto chain_on = [](const TimingModel& model) {
    // bf16 16384 x 1024: 32 MiB between the two matmuls.
    return std::vector<OpTiming>{model.estimate_matmul(16384, 1024, 512, NumberType::kBf16),
                                 model.estimate_matmul(16384, 512, 1024, NumberType::kBf16)};
  };
  const Hardware v4 = preset("tpu_v4");
  EXPECT_EQ(v4.cmem_bytes, 128LL << 20);
  const TimingModel model(v4);
  const std::vector<OpTiming> chain = chain_on(model);
  ASSERT_GT(chain[0].hbm.output, v4.core.vmem_bytes / 2);
  ASSERT_LE(chain[0].hbm.output, v4.cmem_bytes / v4.cores_per_chip);
  const ProgramTiming with = time_program(model, chain);
  EXPECT_TRUE(with.steps[0].output_kept_on_chip);
  EXPECT_TRUE(with.steps[0].output_in_cmem);
  EXPECT_EQ(with.steps[0].timing.hbm.output, 0);
  EXPECT_TRUE(with.steps[1].input_from_vmem);
  EXPECT_EQ(with.steps[1].timing.hbm.input, 0);
  ProgramPolicy no_cmem;
  no_cmem.use_cmem = false;
  const ProgramTiming without = time_program(model, chain, no_cmem);
  EXPECT_FALSE(without.steps[0].output_kept_on_chip);
  EXPECT_EQ(without.steps[1].timing.hbm.input, chain[1].hbm.input);
  EXPECT_LT(with.hbm_bytes, without.hbm_bytes);
  // A chip without CMEM: the same chain's activation goes through HBM.
  EXPECT_EQ(preset("tpu_v5e").cmem_bytes, 0);
  const TimingModel v5e_small(preset("tpu_v5e", {{"core.vmem_bytes", "16 MiB"}}));  // v4's VMEM, no CMEM
  const ProgramTiming on_v5e = time_program(v5e_small, chain_on(v5e_small));
  EXPECT_FALSE(on_v5e.steps[0].output_kept_on_chip);
  EXPECT_FALSE(on_v5e.steps[0].output_in_cmem);
}

TEST(ProgramTiming, RefusesAnEmptyChainAndVectorOps) {
  const TimingModel model(preset("tpu_v4"));
  EXPECT_THROW(time_program(model, {}), std::invalid_argument);
  EXPECT_THROW(time_program(model, {model.estimate_vector_op(VectorOpKind::kElementwise, 1024, NumberType::kFp32)}),
               std::invalid_argument);
}

}  // namespace
}  // namespace accel::tpu
