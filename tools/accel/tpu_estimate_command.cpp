#include "tpu_estimate_command.hpp"

#ifdef HAVE_ACCEL_EXPERIMENT
#include "tpu_model_estimate.hpp"
#endif

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string_view>

#include "timing/checked_count.hpp"
#include "timing/config_error.hpp"
#include "timing/interconnect_model.hpp"
#include "timing/op_timing.hpp"
#include "timing/presets.hpp"
#include "timing/scalesim_model.hpp"

namespace accel::cli {
namespace {

using namespace accel::tpu;

Hardware select_hardware(const TpuEstimateRequest& request) {
  SystemSelection selection;
  selection.preset_or_file = request.preset;
  for (const auto& text : request.overrides) selection.overrides.push_back(parse_field_override(text));
  if (request.array) {
    int rows = 0, columns = 0;
    if (!parse_array_size(*request.array, rows, columns)) {
      throw std::invalid_argument("--array '" + *request.array + "' is not RxC with positive sizes, e.g. 128x128");
    }
    selection.array_rows = rows;
    selection.array_columns = columns;
  }
  if (request.dataflow) {
    Dataflow dataflow{};
    if (!parse_dataflow(*request.dataflow, dataflow)) {
      throw std::invalid_argument("--dataflow '" + *request.dataflow + "' is not one of ws, os, is");
    }
    selection.dataflow = dataflow;
  }
  return load_system(selection);
}

std::string describe_hardware(const Hardware& hw) {
  const auto& mxu = hw.core.mxu;
  const std::string share = hw.cores_per_chip > 1 ? fmt::format(" of the chip's {:.0f}", hw.hbm.bandwidth_bytes_per_s / 1e9)
                                                 : std::string();
  return fmt::format("{} (one TensorCore: {} MXU{} of {}x{} {}, {} {}, {:.0f} MHz, HBM {:.0f}{} GB/s)", hw.name,
                     hw.core.mxus, hw.core.mxus == 1 ? "" : "s", mxu.rows, mxu.columns, to_string(mxu.dataflow),
                     to_string(mxu.input_type), to_string(mxu.accumulator_type), hw.clock_hz / 1e6,
                     hw.hbm.bandwidth_bytes_per_s / hw.cores_per_chip / 1e9, share);
}

// The op's energy in joules (docs/tpu-emulator.md, "Energy"); null without the preset's figures.
nlohmann::json energy_json(const std::optional<Energy>& e) {
  if (!e) return nullptr;
  return {{"total_j", e->total_j()}, {"mac_j", e->mac_j}, {"sram_j", e->sram_j}, {"hbm_j", e->hbm_j},
          {"vector_j", e->vector_missing ? nlohmann::json() : nlohmann::json(e->vector_j)}};
}

nlohmann::json timing_json(const OpTiming& t) {
  return {{"cycles", t.cycles},
          {"compute_cycles", t.compute_cycles},
          {"memory_cycles", t.memory_cycles},
          {"stall_cycles", t.stall_cycles},
          {"time_ms", t.seconds * 1e3},
          {"mxu_utilization", t.mxu_utilization},
          {"useful_macs", t.useful_macs},
          {"hbm_bytes", t.hbm_bytes},
          {"hbm_bytes_by_operand", {{"input", t.hbm.input}, {"weights", t.hbm.weights}, {"output", t.hbm.output}}},
          {"arithmetic_intensity_flop_per_byte", t.arithmetic_intensity},
          {"bound", std::string(to_string(t.bound))},
          {"folds", t.folds},
          {"folds_per_mxu", t.folds_per_mxu},
          {"energy", energy_json(t.energy)}};
}

void print_table(std::ostream& out, const std::vector<std::pair<std::string, std::string>>& rows) {
  for (const auto& [name, value] : rows) out << fmt::format("  {:<22} {}\n", name, value);
}

// The sizes an op takes, by the names its usage prints.
std::string_view sizes_usage(const std::string& op) {
  if (op == "gemm") return "M N K";
  if (op == "conv2d") return "N H W C K R S";
  if (op == "vector") return "ELEMENTS";
  return "BYTES";  // allreduce, collective
}

void require_dims(const TpuEstimateRequest& request, std::size_t count, std::string_view usage) {
  if (request.dims.size() != count) {
    throw std::invalid_argument(fmt::format("'{}' takes {} sizes: {}", request.op, count, usage));
  }
  for (std::int64_t d : request.dims) {
    if (d <= 0) throw std::invalid_argument(fmt::format("'{}' sizes must be positive: {}", request.op, usage));
  }
}

int estimate(const TpuEstimateRequest& request, std::ostream& out) {
  const Hardware hw = request.megacore ? megacore_view(select_hardware(request)) : select_hardware(request);
  TimingOptions options;
  options.convention = request.scalesim ? TimingConvention::kScaleSim : TimingConvention::kTpu;
  options.ideal_memory = request.ideal_memory || request.scalesim;
  const TimingModel model(hw, options);
  const NumberType dtype = hw.core.mxu.input_type;

  nlohmann::json json{{"preset", hw.name},
                      {"source", hw.source},
                      {"convention", std::string(to_string(options.convention))},
                      {"ideal_memory", options.ideal_memory},
                      {"array", fmt::format("{}x{}", hw.core.mxu.rows, hw.core.mxu.columns)},
                      {"mxus", hw.core.mxus},
                      {"dataflow", std::string(to_string(hw.core.mxu.dataflow))},
                      {"clock_hz", hw.clock_hz},
                      {"op", request.op}};
  std::string title;
  OpTiming timing;
  std::optional<ScaleSimReport> scalesim;

  if (request.op == "allreduce") {
    require_dims(request, 1, sizes_usage(request.op));
    const AllReduceEstimate all_reduce = estimate_all_reduce(hw, static_cast<double>(request.dims[0]));
    json.update({{"bytes", request.dims[0]},
                 {"chips", all_reduce.chips},
                 {"algorithm", all_reduce.algorithm},
                 {"steps", all_reduce.steps},
                 {"time_ms", all_reduce.seconds * 1e3},
                 {"link_ms", all_reduce.link_seconds * 1e3},
                 {"on_chip_ms", all_reduce.on_chip_seconds * 1e3},
                 {"cycles", checked_round_count(all_reduce.seconds * hw.clock_hz, "the all-reduce's cycles")}});
    if (request.json) {
      out << json.dump(2) << "\n";
      return 0;
    }
    out << fmt::format("all-reduce of {} bytes over {} chips of {}\n", request.dims[0], all_reduce.chips, hw.name);
    print_table(out, {{"algorithm", all_reduce.algorithm},
                      {"steps", std::to_string(all_reduce.steps)},
                      {"simulated time", fmt::format("{:.6f} ms", all_reduce.seconds * 1e3)},
                      {"  over the links", fmt::format("{:.6f} ms", all_reduce.link_seconds * 1e3)},
                      {"  on chip (HBM)", fmt::format("{:.6f} ms", all_reduce.on_chip_seconds * 1e3)}});
    return 0;
  }

  if (request.op == "collective") {
    require_dims(request, 1, sizes_usage(request.op));
    Collective kind{};
    if (!parse_collective(request.collective, kind)) {
      throw std::invalid_argument("collective '" + request.collective +
                                  "' is not all_reduce, all_gather, reduce_scatter or all_to_all");
    }
    if (request.axis < 0 || request.axis >= static_cast<int>(hw.interconnect.dims.size())) {
      throw std::invalid_argument(fmt::format("--axis {}: expected 0 to {}, an axis of the slice's interconnect.dims [{}]",
                                              request.axis, static_cast<int>(hw.interconnect.dims.size()) - 1,
                                              fmt::join(hw.interconnect.dims, ", ")));
    }
    const AllReduceEstimate collective =
        estimate_collective(hw, kind, static_cast<double>(request.dims[0]), request.axis);
    json.update({{"bytes", request.dims[0]},
                 {"collective", request.collective},
                 {"axis", request.axis},
                 {"chips", collective.chips},
                 {"wraparound", axis_wraps_around(hw, request.axis)},
                 {"algorithm", collective.algorithm},
                 {"steps", collective.steps},
                 {"time_us", collective.seconds * 1e6},
                 {"link_us", collective.link_seconds * 1e6},
                 {"latency_us", collective.latency_seconds * 1e6}});
    if (request.json) {
      out << json.dump(2) << "\n";
      return 0;
    }
    out << fmt::format("{} of {} bytes along axis {} ({} chips) of {}\n", request.collective, request.dims[0],
                       request.axis, collective.chips, hw.name);
    print_table(out, {{"algorithm", collective.algorithm},
                      {"steps", std::to_string(collective.steps)},
                      {"simulated time", fmt::format("{:.3f} us", collective.seconds * 1e6)},
                      {"  over the links", fmt::format("{:.3f} us", collective.link_seconds * 1e6)},
                      {"  hop latency", fmt::format("{:.3f} us", collective.latency_seconds * 1e6)}});
    return 0;
  }

  if (request.op == "gemm") {
    require_dims(request, 3, sizes_usage(request.op));
    timing = model.estimate_matmul(request.dims[0], request.dims[1], request.dims[2], dtype);
    title = fmt::format("gemm M={} N={} K={}", request.dims[0], request.dims[1], request.dims[2]);
  } else if (request.op == "conv2d") {
    require_dims(request, 7, sizes_usage(request.op));
    Conv2dShape conv{request.dims[0], request.dims[1], request.dims[2], request.dims[3],
                     request.dims[4], request.dims[5], request.dims[6], request.stride, Padding::kValid};
    if (request.padding == "same") {
      conv.padding = Padding::kSame;
    } else if (request.padding != "valid") {
      throw std::invalid_argument("--padding '" + request.padding + "' is not valid or same");
    }
    timing = model.estimate_conv2d(conv, dtype);
    title = fmt::format("conv2d N={} H={} W={} C={} K={} R={} S={} stride {} padding {} -> GEMM M={} N={} K={}",
                        conv.batch, conv.height, conv.width, conv.channels, conv.filters, conv.kernel_h,
                        conv.kernel_w, conv.stride, request.padding, timing.gemm.m, timing.gemm.n, timing.gemm.k);
  } else if (request.op == "vector") {
    require_dims(request, 1, sizes_usage(request.op));
    VectorOpKind kind{};
    if (!parse_vector_op_kind(request.vector_kind, kind)) {
      throw std::invalid_argument("vector op '" + request.vector_kind +
                                  "' is not elementwise, transcendental, reduction, softmax, sgd, momentum or adam");
    }
    timing = model.estimate_vector_op(kind, request.dims[0], NumberType::kFp32);
    title = fmt::format("vector {} over {} fp32 elements", request.vector_kind, request.dims[0]);
  } else {
    throw std::invalid_argument("unknown estimate '" + request.op + "'; expected gemm, conv2d, vector, allreduce or collective");
  }
  if (request.scalesim && timing.useful_macs > 0 && hw.core.mxus == 1) {
    scalesim = scalesim_gemm(timing.gemm, hw.core.mxu.rows, hw.core.mxu.columns, hw.core.mxu.dataflow);
  }

  json.update({{"gemm", {{"m", timing.gemm.m}, {"n", timing.gemm.n}, {"k", timing.gemm.k}}}});
  json.update(timing_json(timing));
  if (scalesim) {
    json["scalesim"] = {{"total_cycles", scalesim->cycles},
                        {"overall_utilization", scalesim->overall_utilization},
                        {"mapping_efficiency", scalesim->mapping_efficiency},
                        {"ifmap_sram_reads", scalesim->ifmap_sram_reads},
                        {"filter_sram_reads", scalesim->filter_sram_reads},
                        {"ofmap_sram_writes", scalesim->ofmap_sram_writes}};
  }
  if (request.json) {
    out << json.dump(2) << "\n";
    return 0;
  }
  out << title << "\n";
  out << "on " << describe_hardware(hw) << ", " << to_string(options.convention) << " convention"
      << (options.ideal_memory ? ", ideal memory" : "") << "\n";
  std::vector<std::pair<std::string, std::string>> rows{
      {"cycles", std::to_string(timing.cycles)},
      {"simulated time", fmt::format("{:.6f} ms", timing.seconds * 1e3)},
      {"MXU utilization", fmt::format("{:.2f} %", timing.mxu_utilization * 100)},
      {"HBM bytes", fmt::format("{} (in {}, weights {}, out {})", timing.hbm_bytes, timing.hbm.input,
                                timing.hbm.weights, timing.hbm.output)},
      {"arithmetic intensity", fmt::format("{:.1f} FLOP/byte", timing.arithmetic_intensity)},
      {"bound", std::string(to_string(timing.bound))},
      {"compute cycles", std::to_string(timing.compute_cycles)},
      {"memory cycles", std::to_string(timing.memory_cycles)},
      {"stall cycles", std::to_string(timing.stall_cycles)},
      {"energy", !timing.energy ? "n/a (the preset has no energy figures)"
                 : fmt::format("{:.4g} J (MACs {:.4g}, SRAM {:.4g}, HBM {:.4g}, vector {})", timing.energy->total_j(),
                               timing.energy->mac_j, timing.energy->sram_j, timing.energy->hbm_j,
                               timing.energy->vector_missing ? "n/a" : fmt::format("{:.4g}", timing.energy->vector_j))}};
  if (timing.useful_macs > 0) {
    rows.push_back({"folds", fmt::format("{} ({} on the busiest MXU)", timing.folds, timing.folds_per_mxu)});
  }
  if (scalesim) {
    rows.push_back({"SCALE-Sim mapping eff.", fmt::format("{:.2f} %", scalesim->mapping_efficiency * 100)});
    rows.push_back({"SCALE-Sim SRAM reads",
                    fmt::format("ifmap {}, filter {}", scalesim->ifmap_sram_reads, scalesim->filter_sram_reads)});
    rows.push_back({"SCALE-Sim SRAM writes", std::to_string(scalesim->ofmap_sram_writes)});
  }
  print_table(out, rows);
  return 0;
}

}  // namespace

int run_tpu_estimate(const TpuEstimateRequest& request, std::ostream& out, std::ostream& err) {
  try {
    return estimate(request, out);
  } catch (const CountOverflowError& error) {
    // Raised deep in the timing model, but caused by the sizes the user gave:
    // the message names them.
    err << fmt::format("accel tpu estimate: {} {} = {}: {}\n", request.op, sizes_usage(request.op),
                       fmt::join(request.dims, " "), error.what());
    return 2;
  } catch (const std::exception& error) {
    err << "accel tpu estimate: " << error.what() << "\n";
    return 2;
  }
}

void add_tpu_command(CLI::App& app) {
  CLI::App* tpu = app.add_subcommand("tpu", "TPU emulator tools");
  tpu->require_subcommand(1);
  CLI::App* estimate = tpu->add_subcommand(
      "estimate", "Time an op, or a model's compiled step (--model), on a TPU preset (simulated; no tensor values)");
#ifdef HAVE_ACCEL_EXPERIMENT
  estimate->require_subcommand(0, 1);  // or --model (tpu_model_estimate.cpp)
#else
  estimate->require_subcommand(1);
#endif
  auto request = std::make_shared<TpuEstimateRequest>();
  estimate->add_option("--preset", request->preset, "Preset name (configs/tpu) or a YAML file")
      ->capture_default_str();
  estimate->add_option("--set", request->overrides, "Override a field, e.g. --set core.mxu.rows=64");
  estimate->add_option_function<std::string>(
      "--array", [request](const std::string& value) { request->array = value; }, "One MXU of RxC PEs, e.g. 32x32");
  estimate->add_option_function<std::string>(
      "--dataflow", [request](const std::string& value) { request->dataflow = value; }, "ws, os or is")
      ->check(CLI::IsMember({"ws", "os", "is"}));
  estimate->add_flag("--ideal-memory", request->ideal_memory, "No HBM bandwidth stalls");
  estimate->add_flag("--scalesim", request->scalesim, "SCALE-Sim v2 cycle conventions (implies ideal memory)");
  estimate->add_flag("--json", request->json, "Print one JSON object");

#ifdef HAVE_ACCEL_EXPERIMENT
  add_model_estimate_options(*estimate, request);
#endif

  auto run = [request](const std::string& op) {
    request->op = op;
    const int code = run_tpu_estimate(*request, std::cout, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  };
  CLI::App* gemm = estimate->add_subcommand("gemm", "OUT[M x N] = IN[M x K] . W[K x N]");
  gemm->add_option("M N K", request->dims, "M = output rows, N = output columns, K = reduced dimension")
      ->expected(3)
      ->required()
      ->check(CLI::PositiveNumber);
  gemm->callback([run] { run("gemm"); });

  CLI::App* conv = estimate->add_subcommand("conv2d", "NHWC convolution with K filters of R x S");
  conv->add_option("N H W C K R S", request->dims, "batch, height, width, channels, filters, kernel rows, columns")
      ->expected(7)
      ->required()
      ->check(CLI::PositiveNumber);
  conv->add_option("--stride", request->stride, "Stride in both dimensions")->capture_default_str()->check(CLI::PositiveNumber);
  conv->add_option("--padding", request->padding, "valid or same")->capture_default_str()->check(CLI::IsMember({"valid", "same"}));
  conv->callback([run] { run("conv2d"); });

  CLI::App* vector = estimate->add_subcommand("vector", "A vector-unit op over ELEMENTS fp32 values");
  vector->add_option("KIND", request->vector_kind, "elementwise, transcendental, reduction, softmax, sgd, momentum, adam")
      ->required();
  vector->add_option("ELEMENTS", request->dims, "Number of elements")->expected(1)->required()->check(CLI::PositiveNumber);
  vector->callback([run] { run("vector"); });

  CLI::App* all_reduce = estimate->add_subcommand("allreduce", "All-reduce of BYTES over the preset's chips");
  all_reduce->add_option("BYTES", request->dims, "Bytes per replica")->expected(1)->required()->check(CLI::PositiveNumber);
  all_reduce->add_flag("--megacore", request->megacore,
                       "A chip's TensorCores as one device (v4, v5p): no combining of the cores' partials");
  all_reduce->callback([run] { run("allreduce"); });

  CLI::App* collective = estimate->add_subcommand(
      "collective", "A collective of BYTES per chip among the chips along one axis of the preset's slice");
  collective->add_option("KIND", request->collective, "all_reduce, all_gather, reduce_scatter or all_to_all")
      ->required();
  collective->add_option("BYTES", request->dims,
                         "Bytes per chip: the gathered array (all_gather), the array (reduce_scatter, all_reduce), "
                         "the exchanged buffer (all_to_all)")
      ->expected(1)
      ->required()
      ->check(CLI::PositiveNumber);
  collective->add_option("--axis", request->axis, "Axis of interconnect.dims")->capture_default_str()->check(CLI::NonNegativeNumber);
  collective->callback([run] { run("collective"); });
}

}  // namespace accel::cli
