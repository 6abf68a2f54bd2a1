// The hardware description of a TPU system: chips x TensorCores x MXUs of
// R x C systolic arrays, vector unit, on-chip buffers, HBM and inter-chip
// links. Plain data plus the figures derived from it (peaks, ridge point,
// device names). Loading and validating YAML lives in config_loader.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel::tpu {

// Which operand stays in the processing elements while the others stream.
enum class Dataflow { kWeightStationary, kOutputStationary, kInputStationary };

// Element types the MXU takes as inputs or accumulates in.
enum class NumberType { kInt8, kInt32, kBf16, kFp16, kFp32 };

// Inter-chip topology; kNone for a single PCIe card (TPU v1).
enum class Topology { kNone, kRing, kMesh2D, kTorus2D, kMesh3D, kTorus3D };

std::string_view to_string(Dataflow dataflow);    // "ws", "os", "is"
std::string_view to_string(NumberType type);      // "int8", "bf16", ...
std::string_view to_string(Topology topology);    // "torus_3d", ...
bool parse_dataflow(std::string_view text, Dataflow& out);  // ws|os|is or long names
bool parse_number_type(std::string_view text, NumberType& out);
bool parse_topology(std::string_view text, Topology& out);
int bytes_per_element(NumberType type);

struct MxuConfig {
  int rows = 128;        // R: PEs along the reduced/stationary dimension
  int columns = 128;     // C
  Dataflow dataflow = Dataflow::kWeightStationary;
  NumberType input_type = NumberType::kBf16;
  NumberType accumulator_type = NumberType::kFp32;
};

struct VectorUnitConfig {
  int sublanes = 8;
  int lanes = 128;
  int alus_per_lane = 1;  // elementwise operations per lane per cycle
};

struct CoreConfig {
  int mxus = 1;
  MxuConfig mxu;
  VectorUnitConfig vector_unit;
  std::int64_t vmem_bytes = 0;         // unified buffer / VMEM per core
  std::int64_t accumulator_bytes = 0;  // dedicated accumulators (0: inside VMEM)
};

struct HbmConfig {
  std::int64_t capacity_bytes = 0;
  double bandwidth_bytes_per_s = 0;
};

struct InterconnectConfig {
  Topology topology = Topology::kNone;
  int links = 0;                       // ports per chip
  double link_bandwidth_bytes_per_s = 0;  // per link, per direction
  double link_latency_s = 0;           // per hop step of a collective
  // Chips along an axis whose ends a wraparound link joins: an axis of a
  // torus wraps when its size is a multiple of this (v5e and v6e: 16, only a
  // whole pod's axis; v4 and v5p: 4, the 4x4x4 cubes the optical switches
  // close). 0: every axis of a torus wraps.
  int wraparound_axis = 0;
  std::vector<int> dims;               // slice shape, product == chips
  // The data-center network between slices (multislice): each chip's share
  // of its host's NICs, one way, and the latency of one exchange. 0: not
  // published for this chip (a multislice estimate is refused).
  double dcn_bandwidth_bytes_per_s = 0;
  double dcn_latency_s = 0;
};

// Energy per operation of the chip's process, in picojoules, each from a
// published source the preset names (docs/tpu-emulator.md, "Energy").
// Optional figures stay empty when no source gives one: work of that kind
// then has no energy (reported as such), never a guessed one.
struct EnergyConfig {
  double mac_pj = 0;            // one MXU multiply-accumulate at the array's precision
  double sram_pj_per_byte = 0;  // one byte read from or written to on-chip SRAM (VMEM)
  double hbm_pj_per_byte = 0;   // one byte read from or written to HBM
  std::optional<double> link_pj_per_byte;          // one byte sent over an inter-chip link
  std::optional<double> vector_pj_per_element_op;  // one vector instruction on one element
  // The chip's power when idle (watts): what it draws whatever it computes,
  // so a step's energy is this times its time plus the operations' energy.
  std::optional<double> idle_power_w;
  std::vector<std::string> sources;                // the preset's citations, as written
};

struct Hardware {
  std::string name;           // preset or file stem
  std::string source;         // where it came from (file path or "<override>")
  double clock_hz = 0;
  bool clock_derived_from_peak = false;
  double published_peak_ops_per_s = 0;  // per chip, from the cited source
  int chips = 1;
  int cores_per_chip = 1;
  // Megacore: the chip's TensorCores can run one op together (TPU v4, v5p);
  // TimingOptions::megacore uses it. No effect on a chip of one core.
  bool megacore = false;
  // CMEM: on-chip memory shared by the chip's cores, between VMEM and HBM
  // (TPU v4: 128 MiB); 0 when the chip has none. Per chip.
  std::int64_t cmem_bytes = 0;
  CoreConfig core;
  HbmConfig hbm;                // per chip
  InterconnectConfig interconnect;
  std::optional<EnergyConfig> energy;  // absent: the preset has no energy figures
};

// Multiply-accumulates the MXUs of one core can do per cycle.
std::int64_t peak_macs_per_cycle_per_core(const Hardware& hw);
// 2 ops per MAC, all cores of one chip at the clock: comparable to vendor peaks.
double peak_ops_per_s_per_chip(const Hardware& hw);
// Roofline ridge point of one chip: MACs per byte of off-chip traffic.
double ridge_point_macs_per_byte(const Hardware& hw);
// Megacore mode as a system: each chip whose preset has megacore becomes one
// TensorCore holding all its cores' MXUs, VMEM, accumulators and vector ALUs
// (so the chip is one device); the same cycles as TimingOptions::megacore.
// Any other hardware is returned unchanged.
Hardware megacore_view(const Hardware& hw);

// The slice shape for `chips` chips in `hw`'s topology: its own dims when
// they hold that many chips, otherwise as Cloud TPU shapes its slices, the
// most nearly cubic (square in 2D) factorization, smallest axis first (v4
// with 64 chips: 4x4x4; 2048: 8x16x16; v5e with 256: 16x16; 8: 2x4).
std::vector<int> slice_dims(const Hardware& hw, int chips);
// Devices of the system, one per TensorCore: TPU:0 .. TPU:N-1.
int device_count(const Hardware& hw);
std::vector<std::string> device_names(const Hardware& hw);

}  // namespace accel::tpu
