// The energy model: an op's joules are its counts (MACs, SRAM, HBM and link
// bytes, vector element-instructions) times the preset's figures, checked
// against hand counts; a preset without an `energy:` section reports none;
// a bad energy field is a ConfigError at its file:line:column; the shipped
// tpu_v4 figures are the ones its sources give.
#include <gtest/gtest.h>

#include <string>

#include "hardware_text_support.hpp"
#include "timing/config_error.hpp"
#include "timing/config_loader.hpp"
#include "timing/energy_model.hpp"
#include "timing/interconnect_model.hpp"
#include "timing/op_timing.hpp"
#include "timing/presets.hpp"

namespace accel::tpu {
namespace {

using testing::kValid;
using testing::load_error;
using testing::replace;

// kValid (lines 1-25) plus figures chosen to be exact in binary; the
// section starts at line 26.
const std::string kWithEnergy = std::string(kValid) + R"(energy:
  mac_pj: 0.5
  sram_pj_per_byte: 2
  hbm_pj_per_byte: 32
  link_pj_per_byte: 8
  vector_pj_per_element_op: 0.25
  sources: ["a published table", "another"]
)";

constexpr double kPico = 1e-12;

Hardware with_energy() { return load_hardware_text(kWithEnergy, "test.yaml"); }

TEST(Energy, AHandCountedGemmCostsMacsAndBytesTimesTheFigures) {
  // 128 x 128 x 128 bf16 on one 128x128 weight-stationary MXU: one fold.
  const OpTiming gemm = TimingModel(with_energy()).estimate_matmul(128, 128, 128, NumberType::kBf16);
  ASSERT_TRUE(gemm.energy.has_value());
  const double macs = 128.0 * 128 * 128;
  const double tensor_bytes = 128.0 * 128 * 2;  // one (8, 128)-tiled bf16 matrix
  const double hbm_bytes = 3 * tensor_bytes;     // input, weights, output, once each (all fit in VMEM)
  // SCALE-Sim's counts for one fold: each input and weight element read once
  // (bf16), each output written once as an fp32 partial sum; plus every HBM
  // byte passing through VMEM.
  const double sram_bytes = (128.0 * 128 + 128.0 * 128) * 2 + 128.0 * 128 * 4 + hbm_bytes;
  EXPECT_EQ(gemm.useful_macs, 128 * 128 * 128);
  EXPECT_EQ(gemm.hbm_bytes, static_cast<std::int64_t>(hbm_bytes));
  const Energy& energy = *gemm.energy;
  EXPECT_DOUBLE_EQ(energy.mac_j, macs * 0.5 * kPico);
  EXPECT_DOUBLE_EQ(energy.sram_j, sram_bytes * 2 * kPico);
  EXPECT_DOUBLE_EQ(energy.hbm_j, hbm_bytes * 32 * kPico);
  EXPECT_EQ(energy.link_j, 0.0);
  EXPECT_EQ(energy.vector_j, 0.0);  // no epilogue: the MXU alone
  EXPECT_DOUBLE_EQ(energy.total_j(), (macs * 0.5 + sram_bytes * 2 + hbm_bytes * 32) * kPico);
  EXPECT_FALSE(energy.link_missing);
  EXPECT_FALSE(energy.vector_missing);
}

TEST(Energy, AVectorOpCostsItsElementInstructionsAndItsBytes) {
  const OpTiming op = TimingModel(with_energy()).estimate_vector_op(VectorOpKind::kTranscendental, 4096, NumberType::kFp32);
  ASSERT_TRUE(op.energy.has_value());
  const double bytes = 2 * 4096.0 * 4;  // reads x, writes y
  EXPECT_DOUBLE_EQ(op.energy->vector_j, 4096.0 * 4 * 0.25 * kPico);  // 4 instructions per element
  EXPECT_DOUBLE_EQ(op.energy->hbm_j, bytes * 32 * kPico);
  EXPECT_DOUBLE_EQ(op.energy->sram_j, (bytes + bytes) * 2 * kPico);  // the unit's loads and stores, and the DMA's
  EXPECT_EQ(op.energy->mac_j, 0.0);
}

TEST(Energy, APresetWithoutTheSectionReportsNone) {
  const Hardware hw = load_hardware_text(kValid, "test.yaml");
  EXPECT_FALSE(hw.energy.has_value());
  const TimingModel model(hw);
  EXPECT_FALSE(model.estimate_matmul(256, 256, 256, NumberType::kBf16).energy.has_value());
  EXPECT_FALSE(model.estimate_vector_op(VectorOpKind::kElementwise, 1000, NumberType::kFp32).energy.has_value());
  EXPECT_FALSE(energy_of(hw, {1, 1, 1, 1, 1}).has_value());
  const Hardware v5e = load_system({.preset_or_file = "tpu_v5e"});
  EXPECT_FALSE(all_reduce_energy(v5e, estimate_all_reduce(v5e, 1e6)).has_value());
}

TEST(Energy, OnlyPresetsWithPublishedFiguresHaveThem) {
  for (const std::string& name : list_presets()) {
    const Hardware hw = load_system({.preset_or_file = name});
    EXPECT_EQ(hw.energy.has_value(), name == "tpu_v4") << name;
  }
  const EnergyConfig v4 = *load_system({.preset_or_file = "tpu_v4"}).energy;
  EXPECT_DOUBLE_EQ(v4.mac_pj, 0.21 + 0.38);        // J21, 7 nm: bf16 multiply + fp32 add
  EXPECT_DOUBLE_EQ(v4.sram_pj_per_byte, 14.0 / 8);  // J21, 7 nm: 1 MB SRAM, 64-bit access
  EXPECT_DOUBLE_EQ(v4.hbm_pj_per_byte, 350.0 / 8);  // J21: HBM2 250-450 pJ per 64 bits, the middle
  EXPECT_DOUBLE_EQ(*v4.vector_pj_per_element_op, 1.31);
  EXPECT_FALSE(v4.link_pj_per_byte.has_value());    // no published ICI figure
  EXPECT_EQ(v4.sources.size(), 3u);
}

TEST(Energy, DoublingTheHbmBytesDoublesTheHbmEnergy) {
  const TimingModel model(with_energy());
  const OperandBytes once{1 << 20, 1 << 18, 1 << 20};
  const OperandBytes twice{2 << 20, 2 << 18, 2 << 20};
  const OpTiming a = model.estimate_gemm("gemm", {512, 512, 512}, once);
  const OpTiming b = model.estimate_gemm("gemm", {512, 512, 512}, twice);
  ASSERT_EQ(b.hbm_bytes, 2 * a.hbm_bytes);  // both fit in half the VMEM: each tensor moves once
  EXPECT_DOUBLE_EQ(b.energy->hbm_j, 2 * a.energy->hbm_j);
  EXPECT_DOUBLE_EQ(b.energy->mac_j, a.energy->mac_j);  // the same multiply
  const OpTiming small = model.estimate_vector_op(VectorOpKind::kElementwise, 1000, 4000, 4000, 4);
  const OpTiming large = model.estimate_vector_op(VectorOpKind::kElementwise, 1000, 8000, 8000, 4);
  EXPECT_DOUBLE_EQ(large.energy->hbm_j, 2 * small.energy->hbm_j);
}

TEST(Energy, AFusedChainMovesHbmOnceAndCostsLessHbmEnergy) {
  // Three elementwise ops over 1 M floats: one by one each reads and writes
  // HBM; fused, the input is read and the result written once.
  const TimingModel model(with_energy());
  const std::int64_t elements = 1 << 20, bytes = elements * 4;
  Energy one_by_one;
  for (int op = 0; op < 3; ++op) {
    one_by_one += *model.estimate_vector_op(VectorOpKind::kElementwise, elements, bytes, bytes, 4).energy;
  }
  const OpTiming fused = model.estimate_vector_kernel("fused", {elements, 3, 0, bytes, bytes, 4});
  ASSERT_TRUE(fused.energy.has_value());
  EXPECT_DOUBLE_EQ(fused.energy->hbm_j, 2.0 * bytes * 32 * kPico);
  EXPECT_DOUBLE_EQ(one_by_one.hbm_j, 3 * fused.energy->hbm_j);
  EXPECT_LT(fused.energy->sram_j, one_by_one.sram_j);
  EXPECT_DOUBLE_EQ(fused.energy->vector_j, one_by_one.vector_j);  // the same instructions
  EXPECT_LT(fused.energy->total_j(), one_by_one.total_j());
}

TEST(Energy, RetimingAfterAnOperandStaysInVmemDropsItsHbmEnergy) {
  const TimingModel model(with_energy());
  OpTiming gemm = model.estimate_matmul(256, 256, 256, NumberType::kFp32);
  const Energy before = *gemm.energy;
  const std::int64_t input = gemm.hbm.input;
  gemm.hbm.input = 0;  // what the plugin does for an input still in VMEM
  const OpTiming resident = model.retime(gemm);
  EXPECT_DOUBLE_EQ(before.hbm_j - resident.energy->hbm_j, static_cast<double>(input) * 32 * kPico);
  EXPECT_DOUBLE_EQ(resident.energy->mac_j, before.mac_j);
}

TEST(Energy, TheAllReduceChargesItsLinkBytes) {
  // kValid: 4 chips in a 2 x 2 torus, one core each. Dimension by dimension:
  // each chip sends 2 (d - 1) / d of the data, which halves after the first.
  const Hardware hw = with_energy();
  const double bytes = 1e6;
  const AllReduceEstimate estimate = estimate_all_reduce(hw, bytes);
  EXPECT_DOUBLE_EQ(estimate.link_bytes_per_chip, bytes + bytes / 2);
  const std::optional<Energy> energy = all_reduce_energy(hw, estimate);
  ASSERT_TRUE(energy.has_value());
  EXPECT_DOUBLE_EQ(energy->link_j, 4 * 1.5 * bytes * 8 * kPico);
  EXPECT_EQ(energy->hbm_j, 0.0);  // one core per chip: nothing to combine through HBM
  // Without a link figure the link energy is missing, not zero.
  const Hardware no_link = load_hardware_text(replace(kWithEnergy, "  link_pj_per_byte: 8\n", ""), "test.yaml");
  const std::optional<Energy> unknown = all_reduce_energy(no_link, estimate_all_reduce(no_link, bytes));
  ASSERT_TRUE(unknown.has_value());
  EXPECT_TRUE(unknown->link_missing);
  EXPECT_EQ(unknown->total_j(), 0.0);
}

TEST(Energy, WithoutAVectorFigureVectorWorkIsMissingNotGuessed) {
  const Hardware hw = load_hardware_text(replace(kWithEnergy, "  vector_pj_per_element_op: 0.25\n", ""), "test.yaml");
  const OpTiming op = TimingModel(hw).estimate_vector_op(VectorOpKind::kElementwise, 100, NumberType::kFp32);
  ASSERT_TRUE(op.energy.has_value());
  EXPECT_TRUE(op.energy->vector_missing);
  EXPECT_EQ(op.energy->vector_j, 0.0);
  EXPECT_GT(op.energy->hbm_j, 0.0);
}

struct BadEnergy {
  std::string from, to;  // edit of kWithEnergy
  std::string key;
  std::string where;     // line:column
  std::string problem;   // part of the message
};

TEST(Energy, BadEnergyFieldsNameFileLineColumn) {
  const std::vector<BadEnergy> cases{
      {"mac_pj: 0.5", "mac_pj: 0", "energy.mac_pj", "27:11", "out of range"},
      {"mac_pj: 0.5", "mac_pj: 5e3", "energy.mac_pj", "27:11", "out of range"},
      {"sram_pj_per_byte: 2", "sram_pj_per_byte: -2", "energy.sram_pj_per_byte", "28:21", "out of range"},
      {"hbm_pj_per_byte: 32", "hbm_pj_per_byte: .nan", "energy.hbm_pj_per_byte", "29:20", "not a finite number"},
      {"link_pj_per_byte: 8", "link_pj_per_byte: 1e9", "energy.link_pj_per_byte", "30:21", "out of range"},
      {"vector_pj_per_element_op: 0.25", "vector_pj_per_element_op: lots", "energy.vector_pj_per_element_op", "31:29",
       "not a finite number"},
      {"mac_pj: 0.5", "mac_pJ: 0.5", "energy.mac_pJ", "27:3", "unknown key 'energy.mac_pJ' (did you mean 'mac_pj'?)"},
      {"  sram_pj_per_byte: 2\n", "", "energy.sram_pj_per_byte", "27:3", "missing key 'energy.sram_pj_per_byte'"},
      {"sources: [\"a published table\", \"another\"]", "sources: a table", "energy.sources", "32:12", "is not a list"},
      {"sources: [\"a published table\", \"another\"]", "sources: [[1]]", "energy.sources", "32:13",
       "an entry of 'energy.sources' is a list"},
  };
  for (const BadEnergy& c : cases) {
    const ConfigError error = load_error(replace(kWithEnergy, c.from, c.to));
    const std::string what = error.what();
    EXPECT_EQ(error.key(), c.key) << what;
    EXPECT_EQ(what.rfind("test.yaml:" + c.where + ": ", 0), 0u) << c.to << " -> " << what;
    EXPECT_NE(what.find(c.problem), std::string::npos) << what;
  }
  const ConfigError section = load_error(std::string(kValid) + "energy: 3\n");
  EXPECT_EQ(std::string(section.what()).rfind("test.yaml:26:9: 'energy' is not a mapping", 0), 0u) << section.what();
  // The range says its unit.
  EXPECT_NE(load_error(replace(kWithEnergy, "mac_pj: 0.5", "mac_pj: 0")).expected().find("picojoules in"),
            std::string::npos);
}

TEST(Energy, OverridesSetAndCheckTheFigures) {
  const Hardware hw = load_hardware_text(kWithEnergy, "test.yaml", {{"energy.hbm_pj_per_byte", "64"}});
  EXPECT_EQ(hw.energy->hbm_pj_per_byte, 64.0);
  const ConfigError error = load_error(kWithEnergy, {{"energy.mac_pj", "-1"}});
  EXPECT_EQ(error.key(), "energy.mac_pj");
  EXPECT_NE(std::string(error.what()).find("override 'energy.mac_pj=-1'"), std::string::npos) << error.what();
}

}  // namespace
}  // namespace accel::tpu
