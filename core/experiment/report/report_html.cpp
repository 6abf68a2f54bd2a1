#include <accel/experiment/headline.hpp>
#include <accel/experiment/report_html.hpp>
#include <accel/experiment/report_markdown.hpp>

#include "report_figures.hpp"
#include "svg_bar_chart.hpp"
#include "svg_canvas.hpp"
#include "svg_line_chart.hpp"
#include "svg_roofline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace accel::experiment {
namespace {

using svg::escape;

bool has_steps(const RunResult& run) { return !run.steps.empty(); }

// `log_names`: the first of them a run logs is its curve (accuracy has several Keras names).
svg::LineChart log_curve(const ExperimentResults& results, const std::string& id, const std::string& title,
                         const std::vector<std::string>& log_names, const std::string& y_label) {
  svg::LineChart chart{id, title, "training step", y_label, {}, false};
  for (const RunResult& run : results.runs) {
    if (!has_steps(run)) continue;
    svg::LineSeries series{run.name, {}, {}, run.steps.size() < 30};
    std::string log_name;
    for (const std::string& name : log_names) {
      if (log_name.empty() && run.steps.front().logs.contains(name)) log_name = name;
    }
    for (const StepRecord& step : run.steps) {
      auto found = step.logs.find(log_name);
      if (found == step.logs.end()) continue;
      series.x.push_back(static_cast<double>(step.step));
      series.y.push_back(found->second);
    }
    if (!series.x.empty()) chart.series.push_back(std::move(series));
  }
  return chart;
}

svg::LineChart wall_step_times(const ExperimentResults& results) {
  svg::LineChart chart{"step-time-wall", "Time per step, measured wall (host clock)", "training step", "ms per step (measured wall)",
                       {}, true};
  for (const RunResult& run : results.runs) {
    if (!has_steps(run)) continue;
    svg::LineSeries series{run.name, {}, {}, run.steps.size() < 30};
    for (const StepRecord& step : run.steps) {
      series.x.push_back(static_cast<double>(step.step));
      series.y.push_back(step.wall_seconds * 1e3);
    }
    chart.series.push_back(std::move(series));
  }
  return chart;
}

svg::LineChart device_step_times(const ExperimentResults& results) {
  svg::LineChart chart{"step-time-device", "Time per profiled step on the device: simulated (TPU emulator) or op time",
                       "training step", "ms per step", {}, true};
  for (const RunResult& run : results.runs) {
    std::string clock = run.emulator ? "simulated" : run.device_type == "GPU" ? "CUDA events" : "CPU op kernels, measured wall";
    svg::LineSeries series{fmt::format("{} ({})", run.name, clock), {}, {}, true};
    for (const StepRecord& step : run.steps) {
      if (!step.device_seconds) continue;
      series.x.push_back(static_cast<double>(step.step));
      series.y.push_back(*step.device_seconds * 1e3);
    }
    if (!series.x.empty()) chart.series.push_back(std::move(series));
  }
  return chart;
}

// Per run: the measured-wall figure and the simulated one (emulator runs), side by side.
svg::BarChart per_run_by_clock(const ExperimentResults& results, const std::string& id, const std::string& title,
                               const std::string& label, bool throughput) {
  svg::BarChart chart{id, title, label, {"measured wall", "simulated (emulator)"}, {}, true};
  for (const HeadlineRow& row : headline_rows(results)) {
    if (!row.measured_step_seconds) continue;
    auto figure = [&](double step_seconds) -> std::optional<double> {
      if (step_seconds <= 0) return std::nullopt;
      if (!throughput) return step_seconds * 1e3;
      for (const RunResult& run : results.runs) {
        if (run.name == row.run && run.batch_size > 0) return static_cast<double>(run.batch_size) / step_seconds;
      }
      return std::nullopt;
    };
    svg::BarGroup group{row.run, {figure(*row.measured_step_seconds), std::nullopt}};
    if (row.time_source == kSimulated && row.step_seconds) group.values[1] = figure(*row.step_seconds);
    chart.groups.push_back(std::move(group));
  }
  return chart;
}

svg::BarChart category_times(const ExperimentResults& results) {
  svg::BarChart chart{"op-category-time", "Time per op category per profiled step (each run's device clock)",
                      "ms per step (simulated on the emulator, measured wall on the CPU)", {}, {}, true};
  std::vector<std::map<std::string, double>> per_run;
  std::set<std::string> categories;
  for (const RunResult& run : results.runs) {
    if (run.profiled_steps <= 0) continue;
    chart.series.push_back(run.name);
    per_run.push_back(category_seconds_per_step(run));
    for (const auto& [category, seconds] : per_run.back()) categories.insert(category);
  }
  for (const std::string& category : categories) {
    svg::BarGroup group{category, {}};
    for (const auto& seconds : per_run) {
      auto found = seconds.find(category);
      group.values.push_back(found == seconds.end() ? std::nullopt : std::optional<double>(found->second * 1e3));
    }
    chart.groups.push_back(std::move(group));
  }
  return chart;
}

svg::BarChart emulator_per_op(const ExperimentResults& results, bool utilization) {
  svg::BarChart chart{utilization ? "mxu-utilization" : "hbm-traffic",
                      utilization ? "TPU emulator: MXU utilization per op" : "TPU emulator: HBM traffic per op per step",
                      utilization ? "MXU utilization (%)" : "HBM bytes per step",
                      {}, {}, !utilization};
  std::vector<std::vector<EmulatorOpRow>> per_run;
  std::vector<std::string> ops;
  for (const RunResult& run : results.runs) {
    auto rows = emulator_op_rows(run);
    if (rows.empty()) continue;
    chart.series.push_back(run.name);
    for (const EmulatorOpRow& row : rows) {
      if (utilization && row.mxu_utilization <= 0) continue;
      if (std::find(ops.begin(), ops.end(), row.op) == ops.end()) ops.push_back(row.op);
    }
    per_run.push_back(std::move(rows));
  }
  for (const std::string& op : ops) {
    svg::BarGroup group{op, {}};
    for (const auto& rows : per_run) {
      std::optional<double> value;
      for (const EmulatorOpRow& row : rows) {
        if (row.op == op) value = utilization ? row.mxu_utilization * 100 : row.hbm_bytes_per_step;
      }
      group.values.push_back(value);
    }
    chart.groups.push_back(std::move(group));
  }
  return chart;
}

svg::RooflineChart roofline(const ExperimentResults& results) {
  svg::RooflineChart chart{"roofline", "Roofline: each op of the profiled steps on its backend's roof", {}, {}};
  for (const RunResult& run : results.runs) {
    if (run.ops.empty()) continue;
    const size_t roof = chart.roofs.size();
    chart.roofs.push_back({fmt::format("{} ({})", run.name, run.device), run.peak.peak_flops_per_second.value_or(0),
                           run.peak.bandwidth_bytes_per_second.value_or(0)});
    if (!run.peak.peak_flops_per_second || !run.peak.bandwidth_bytes_per_second) chart.roofs.back().name += " roof unknown";
    for (const OpSummary& op : run.ops) {
      if (op.device != run.device || op.flops <= 0 || op.bytes <= 0 || op.seconds <= 0) continue;
      chart.points.push_back({op.op, roof, op.flops / op.bytes, op.flops / op.seconds});
    }
  }
  return chart;
}

// Op benchmark runs: FLOP/s of every size on each run's device clock.
svg::BarChart benchmark_rates(const ExperimentResults& results) {
  svg::BarChart chart{"op-benchmark", "Op benchmark: attained FLOP/s per size (each run's device clock)",
                      "GFLOP/s (simulated on the emulator, CUDA events on a GPU, kernel wall on the CPU)", {}, {}, true};
  std::vector<std::string> sizes;
  std::vector<const RunResult*> runs;
  for (const RunResult& run : results.runs) {
    if (run.benchmark.empty()) continue;
    runs.push_back(&run);
    chart.series.push_back(fmt::format("{} ({})", run.name, run.benchmark.front().time_source));
    for (const BenchmarkPoint& point : run.benchmark) {
      std::string label = point.op;
      for (size_t axis = 0; axis < point.size.size(); ++axis) label += (axis == 0 ? " " : "x") + std::to_string(point.size[axis]);
      if (std::find(sizes.begin(), sizes.end(), label) == sizes.end()) sizes.push_back(label);
    }
  }
  for (const std::string& size : sizes) {
    svg::BarGroup group{size, {}};
    for (const RunResult* run : runs) {
      std::optional<double> value;
      for (const BenchmarkPoint& point : run->benchmark) {
        std::string label = point.op;
        for (size_t axis = 0; axis < point.size.size(); ++axis) label += (axis == 0 ? " " : "x") + std::to_string(point.size[axis]);
        if (label == size && point.seconds > 0) value = point.flops / point.seconds / 1e9;
      }
      group.values.push_back(value);
    }
    chart.groups.push_back(std::move(group));
  }
  return chart;
}

// TPUStrategy runs: each step's simulated time and the gradient all-reduce within it.
svg::LineChart all_reduce_per_step(const ExperimentResults& results) {
  svg::LineChart chart{"all-reduce-per-step", "TPUStrategy: simulated step time and its gradient all-reduce",
                       "training step", "microseconds per step (simulated)", {}, true};
  for (const RunResult& run : results.runs) {
    svg::LineSeries step{run.name + ": step", {}, {}, run.steps.size() < 30};
    svg::LineSeries all_reduce{run.name + ": all-reduce over the interconnect", {}, {}, run.steps.size() < 30};
    for (const StepRecord& record : run.steps) {
      if (!record.simulated_seconds || !record.all_reduce_seconds) continue;
      step.x.push_back(static_cast<double>(record.step));
      step.y.push_back(*record.simulated_seconds * 1e6);
      all_reduce.x.push_back(static_cast<double>(record.step));
      all_reduce.y.push_back(*record.all_reduce_seconds * 1e6);
    }
    if (step.x.empty()) continue;
    chart.series.push_back(std::move(step));
    chart.series.push_back(std::move(all_reduce));
  }
  return chart;
}

struct Plot {
  std::string id;
  std::string svg;
  std::string caption;
};

std::vector<Plot> plots(const ExperimentResults& results) {
  std::vector<std::string> runs;
  for (const RunResult& run : results.runs) runs.push_back(run.name);
  const svg::RunColors one_color_per_run(runs);
  std::vector<Plot> list;
  auto add = [&](std::string id, std::string svg_text, std::string caption) {
    list.push_back({std::move(id), std::move(svg_text), std::move(caption)});
  };
  add("loss-curve", svg::line_chart_svg(log_curve(results, "loss-curve", "Training loss", {"loss"}, "loss (running epoch mean)")),
      "The loss after each step (Keras's running mean over the epoch so far).");
  add("accuracy-curve",
      svg::line_chart_svg(log_curve(results, "accuracy-curve", "Training accuracy",
                                    {"accuracy", "sparse_categorical_accuracy", "categorical_accuracy", "binary_accuracy", "acc"},
                                    "accuracy (running epoch mean)")),
      "The accuracy after each step (running mean over the epoch so far).");
  add("step-time-wall", svg::line_chart_svg(wall_step_times(results)),
      "Measured wall time of every step on the host clock (the emulator's is the time emulating took). Log scale.");
  add("step-time-device", svg::line_chart_svg(device_step_times(results)),
      "Profiled steps only: the sum of the op durations the run's device reported — simulated time on the TPU emulator, "
      "CUDA events on a GPU, kernel wall time on the CPU. Log scale.");
  add("step-time", svg::bar_chart_svg(per_run_by_clock(results, "step-time", "Time per step by clock", "ms per step (log)", false)),
      "Median measured wall time per step and, for emulated runs, simulated time per step.");
  add("throughput",
      svg::bar_chart_svg(per_run_by_clock(results, "throughput", "Throughput by clock", "examples per second (log)", true)),
      "Examples per second = batch / time per step, on each clock.");
  add("op-category-time", svg::bar_chart_svg(category_times(results)),
      "Where a step's time goes, by op category, averaged over the profiled steps. Ops another device ran (CPU fallback) "
      "are listed with that device.");
  add("mxu-utilization", svg::bar_chart_svg(emulator_per_op(results, true)),
      "The emulator's MXU utilization of each MXU op: useful MACs / peak MACs over the op's cycles (cycle-weighted mean).");
  add("hbm-traffic", svg::bar_chart_svg(emulator_per_op(results, false)),
      "The emulator's HBM bytes read and written per op per step. Log scale.");
  if (const svg::BarChart rates = benchmark_rates(results); !rates.groups.empty()) {
    add("op-benchmark", svg::bar_chart_svg(rates),
        "Op benchmark runs: FLOPs per op / median time per op, by each run's device clock. Log scale.");
  }
  if (const svg::LineChart breakdown = all_reduce_per_step(results); !breakdown.series.empty()) {
    add("all-reduce-per-step", svg::line_chart_svg(breakdown),
        "TPUStrategy runs: every step's simulated time (the slowest TensorCore, all-reduce included) and the gradient "
        "all-reduce in it, timed from the preset's interconnect topology and link bandwidth. Log scale.");
  }
  add("roofline", svg::roofline_svg(roofline(results)),
      "Each op (profiled steps, on the run's device) at its arithmetic intensity and attained FLOP/s; dashed lines are "
      "each backend's roof: min(peak FLOP/s, bandwidth x intensity). Sources of the peaks are in the run details.");
  return list;
}

// report.md's Markdown tables and lists as HTML: enough of Markdown for what
// report_markdown writes (headings, tables, bullets, **bold**, `code`).
std::string inline_markdown(const std::string& text) {
  std::string html;
  bool bold = false, code = false;
  for (size_t index = 0; index < text.size(); ++index) {
    if (text.compare(index, 2, "**") == 0 && !code) {
      html += bold ? "</strong>" : "<strong>";
      bold = !bold;
      ++index;
    } else if (text[index] == '`') {
      html += code ? "</code>" : "<code>";
      code = !code;
    } else if (text[index] == '*' && !code) {
      // *term*: emphasis
      size_t end = text.find('*', index + 1);
      if (end == std::string::npos) {
        html += "*";
      } else {
        html += "<em>" + escape(text.substr(index + 1, end - index - 1)) + "</em>";
        index = end;
      }
    } else {
      html += escape(std::string(1, text[index]));
    }
  }
  return html;
}

std::vector<std::string> split_cells(const std::string& line) {
  std::vector<std::string> cells;
  size_t start = 1;
  while (start < line.size()) {
    size_t end = line.find('|', start);
    if (end == std::string::npos) break;
    std::string cell = line.substr(start, end - start);
    cell.erase(0, cell.find_first_not_of(' '));
    cell.erase(cell.find_last_not_of(' ') + 1);
    cells.push_back(cell);
    start = end + 1;
  }
  return cells;
}

std::string markdown_to_html(const std::string& markdown) {
  std::string html;
  std::string line;
  bool in_table = false, in_list = false, header_row = false;
  size_t position = 0;
  while (position <= markdown.size()) {
    size_t end = markdown.find('\n', position);
    if (end == std::string::npos) end = markdown.size();
    line = markdown.substr(position, end - position);
    position = end + 1;
    const bool table_line = line.rfind("|", 0) == 0;
    const bool list_line = line.rfind("- ", 0) == 0;
    if (in_table && !table_line) html += "</tbody></table>\n", in_table = false;
    if (in_list && !list_line) html += "</ul>\n", in_list = false;
    if (table_line) {
      if (line.rfind("|---", 0) == 0) continue;
      if (!in_table) {
        const bool headline = line.find("time / step") != std::string::npos;
        html += headline ? "<table class=\"headline\" id=\"headline\"><thead>" : "<table><thead>";
        in_table = true;
        header_row = true;
      }
      html += "<tr>";
      for (const std::string& cell : split_cells(line)) {
        html += header_row ? "<th>" + inline_markdown(cell) + "</th>" : "<td>" + inline_markdown(cell) + "</td>";
      }
      html += "</tr>";
      if (header_row) html += "</thead><tbody>";
      header_row = false;
    } else if (list_line) {
      if (!in_list) html += "<ul>", in_list = true;
      html += "<li>" + inline_markdown(line.substr(2)) + "</li>";
    } else if (line.rfind("### ", 0) == 0) {
      html += "<h3>" + inline_markdown(line.substr(4)) + "</h3>\n";
    } else if (line.rfind("## ", 0) == 0) {
      html += "<h2>" + inline_markdown(line.substr(3)) + "</h2>\n";
    } else if (line.rfind("# ", 0) == 0) {
      html += "<h1>" + inline_markdown(line.substr(2)) + "</h1>\n";
    } else if (!line.empty()) {
      html += "<p>" + inline_markdown(line) + "</p>\n";
    }
  }
  if (in_table) html += "</tbody></table>\n";
  if (in_list) html += "</ul>\n";
  return html;
}

}  // namespace

std::vector<std::string> report_plot_ids(const ExperimentResults& results) {
  std::vector<std::string> ids;
  for (const Plot& plot : plots(results)) ids.push_back(plot.id);
  return ids;
}

std::string report_html(const ExperimentResults& results) {
  const std::string markdown = report_markdown(results);
  // The Markdown body up to "## Runs" (title, headline, runs not completed), the plots, then the rest.
  const size_t runs_at = markdown.find("\n## Runs\n");
  const std::string head = markdown.substr(0, runs_at == std::string::npos ? markdown.size() : runs_at + 1);
  const std::string tail = runs_at == std::string::npos ? "" : markdown.substr(runs_at + 1);
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" + escape(results.experiment) +
      " — accel experiment report</title>\n<style>\n"
      "body{font-family:sans-serif;max-width:1100px;margin:1em auto;padding:0 1em;color:#222}\n"
      "table{border-collapse:collapse;margin:0.5em 0 1em}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}\n"
      "th{background:#f3f3f3}table.headline td{font-variant-numeric:tabular-nums}\n"
      "figure.plot{display:inline-block;vertical-align:top;margin:0.5em;max-width:660px}\n"
      "figcaption{font-size:0.85em;color:#555;max-width:640px}code{background:#f5f5f5;padding:0 2px}\n"
      "</style></head><body>\n";
  html += markdown_to_html(head);
  html += "<h2>Plots</h2>\n<div class=\"plots\">\n";
  for (const Plot& plot : plots(results)) {
    html += fmt::format("<figure class=\"plot\" id=\"{}\">{}\n<figcaption>{}</figcaption></figure>\n", plot.id, plot.svg,
                        escape(plot.caption));
  }
  html += "</div>\n" + markdown_to_html(tail) + "</body></html>\n";
  return html;
}

}  // namespace accel::experiment
