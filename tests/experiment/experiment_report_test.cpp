// The report side without running anything: results.json round trip, the
// headline figures, the emulator's energy, metrics.csv, the SVG charts, the HTML page's plots, and
// the time to generate every report file for a run of 10,000 steps.
#include <accel/experiment/compare_report.hpp>
#include <accel/experiment/headline.hpp>
#include <accel/experiment/metrics_csv.hpp>
#include <accel/experiment/report_files.hpp>
#include <accel/experiment/report_html.hpp>
#include <accel/experiment/report_markdown.hpp>
#include <accel/experiment/results_json.hpp>
#include <accel/experiment/trace_merge.hpp>

#include "report/svg_bar_chart.hpp"
#include "report/svg_line_chart.hpp"
#include "report/svg_canvas.hpp"
#include "report/svg_roofline.hpp"
#include "runner/backend_peak.hpp"

#include "synthetic_results.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <unistd.h>

namespace accel::experiment {
namespace {

TEST(ResultsJson, RoundTripKeepsEveryFigure) {
  ExperimentResults results = two_runs(50);
  results.runs.push_back(eager_twin(results.runs[1], "tpu_v4_eager", 3.0));
  results.runs[0].compiled_step->eager_reason = "reads a computed tensor on the host";
  const std::string text = results_to_json_text(results);
  const ExperimentResults back = results_from_json_text(text);
  EXPECT_EQ(results_to_json_text(back), text);
  const nlohmann::json document = nlohmann::json::parse(text);
  EXPECT_EQ(document["runs"][1]["headline"]["step_time"]["clock"], "simulated");
  EXPECT_EQ(document["runs"][1]["headline"]["step_time"]["unit"], "s");
  EXPECT_EQ(document["runs"][2]["status"], "skipped");
  EXPECT_TRUE(document["runs"][2]["compiled_step"].is_null());
  const nlohmann::json& compiled = document["runs"][1]["compiled_step"];
  EXPECT_EQ(compiled["setting"], "auto");
  EXPECT_EQ(compiled["jit_compile"], true);
  EXPECT_EQ(compiled["fusions"], 8);
  EXPECT_EQ(compiled["planned_peak_bytes"], 15712012);
  EXPECT_EQ(document["runs"][3]["compiled_step"]["jit_compile"], false);
  EXPECT_EQ(back.runs[0].compiled_step->eager_reason, "reads a computed tensor on the host");
  // The emulator's HBM traffic per training step: the profiled steps' op bytes / profiled steps.
  EXPECT_DOUBLE_EQ(document["runs"][1]["headline"]["hbm_traffic_per_step"]["value"].get<double>(), (2e7 + 1.2e7) / 20);
  EXPECT_EQ(document["runs"][1]["headline"]["hbm_traffic_per_step"]["unit"], "bytes");
  EXPECT_TRUE(document["runs"][0]["headline"]["hbm_traffic_per_step"]["value"].is_null());
}

// The report says how each train step ran: the compiled graph in a few
// figures, an eager run as eager, a compiled run that fell back with the
// reason, and the HBM traffic per step of the emulated TPU compiled and eager
// side by side with their ratio.
TEST(ReportMarkdown, CompiledStepsShowTheGraphTheFallbackAndTheHbmRatio) {
  ExperimentResults results = two_runs(20);
  results.runs.push_back(eager_twin(results.runs[1], "tpu_v4_eager", 2.5));
  results.runs[0].compiled_step->eager_reason = "reads a computed tensor on the host";
  const std::string markdown = report_markdown(results);
  EXPECT_NE(markdown.find("## Compiled steps"), std::string::npos);
  EXPECT_NE(markdown.find("- train step (jit_compile: auto): compiled, 50 ops -> 33 (21 fused into 8 kernels, 15.1 MB "
                          "intermediates saved); peak step memory 15.7 MB planned vs 17.1 MB eager; 1 trace, 19 replays"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| tpu_v4 | auto | compiled | 50 -> 33 | 21 -> 8 | 15.1 MB | 15.7 MB planned vs 17.1 MB eager | "
                          "1.6 MB |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| tpu_v4_eager | false | eager | — | — | — | — | 4 MB |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| cpu | auto | **eager fallback**: reads a computed tensor on the host |"), std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("- HBM traffic per training step: `tpu_v4_eager` (eager) 4 MB vs `tpu_v4` (compiled) 1.6 MB: "
                          "eager / compiled = 2.5x"),
            std::string::npos)
      << markdown;
  results.runs[1].compiled_step->per_replica = true;
  EXPECT_NE(report_markdown(results).find("| tpu_v4 | auto | compiled per replica (forward and backward; "),
            std::string::npos);
  // Only runs that ran compiled are a ratio's denominator.
  results.runs[1].compiled_step->eager_reason = "creates a variable";
  EXPECT_EQ(report_markdown(results).find("eager / compiled ="), std::string::npos);
}

// A run whose weights went NaN (or whose loss overflowed) still gets its
// results and report: non-finite numbers are written as "NaN" / "Infinity" /
// "-Infinity", flagged, and read back as themselves.
TEST(ResultsJson, NonFiniteNumbersAreWrittenAsStringsAndReadBack) {
  ExperimentResults results = two_runs(5);
  RunResult& diverged = results.runs[0];
  diverged.steps[3].logs["loss"] = std::nan("");
  diverged.steps[4].logs["loss"] = HUGE_VAL;
  diverged.steps[4].device_seconds = -HUGE_VAL;
  diverged.evaluation["loss"] = std::nan("");
  diverged.epochs[0].logs["accuracy"] = std::nan("");
  const std::string text = results_to_json_text(results);
  const nlohmann::json document = nlohmann::json::parse(text);
  EXPECT_EQ(document["non_finite_numbers"], true);
  EXPECT_EQ(document["runs"][0]["steps"][3]["logs"]["loss"], "NaN");
  EXPECT_EQ(document["runs"][0]["steps"][4]["logs"]["loss"], "Infinity");
  EXPECT_EQ(document["runs"][0]["steps"][4]["device_seconds"], "-Infinity");
  const ExperimentResults back = results_from_json_text(text);
  EXPECT_TRUE(std::isnan(back.runs[0].steps[3].logs.at("loss")));
  EXPECT_EQ(back.runs[0].steps[4].logs.at("loss"), HUGE_VAL);
  EXPECT_EQ(back.runs[0].steps[4].device_seconds, -HUGE_VAL);
  EXPECT_TRUE(std::isnan(back.runs[0].evaluation.at("loss")));
  EXPECT_EQ(results_to_json_text(back), text);
  // One run as the child process hands it over, and the report files.
  const RunResult handed_over = run_result_from_json_text(run_result_to_json_text(diverged));
  EXPECT_TRUE(std::isnan(handed_over.steps[3].logs.at("loss")));
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("accel-nan-report-" + std::to_string(::getpid()));
  EXPECT_NO_THROW(write_report_files(results, directory.string()));
  EXPECT_TRUE(std::filesystem::exists(directory / "report.md"));
  EXPECT_TRUE(std::filesystem::exists(directory / "report.html"));
  std::filesystem::remove_all(directory);
}

TEST(ResultsJson, FinishedDocumentsSayTheyHoldNoNonFiniteNumber) {
  EXPECT_EQ(nlohmann::json::parse(results_to_json_text(two_runs(3)))["non_finite_numbers"], false);
}

TEST(ResultsJson, AWrongTypeIsAnErrorNotACrash) {
  nlohmann::json run = nlohmann::json::parse(run_result_to_json_text(training_run("cpu", 2, false)));
  run["steps"][0]["logs"]["loss"] = "many";
  EXPECT_THROW(run_result_from_json_text(run.dump()), std::runtime_error);
  run["steps"][0]["logs"] = 3;
  EXPECT_THROW(run_result_from_json_text(run.dump()), std::runtime_error);
}

TEST(Headline, UsesEachRunsClockAndTheFirstRunAsTheBase) {
  const auto rows = headline_rows(two_runs(50));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].time_source, kMeasuredWall);
  EXPECT_EQ(rows[1].time_source, kSimulated);
  EXPECT_NEAR(*rows[1].step_seconds, 0.0003, 1e-12);
  EXPECT_NEAR(*rows[1].ratio_to_first, 0.0003 / *rows[0].step_seconds, 1e-12);
  EXPECT_NEAR(*rows[1].examples_per_second, 64 / 0.0003, 1e-6);
  EXPECT_EQ(*rows[0].final_accuracy, 0.83);
  EXPECT_FALSE(rows[2].step_seconds);
}

// An emulated run whose steps carry their simulated time: the headline step is
// the mean of the steps after the first (a compiled run's first step also
// traces), not the timeline over every step.
TEST(Headline, AnEmulatedRunsStepLeavesOutTheFirstStep) {
  ExperimentResults results = two_runs(4);
  RunResult& emulated = results.runs[1];
  ASSERT_TRUE(emulated.emulator);
  const std::vector<double> simulated{0.010, 0.002, 0.002, 0.004};  // the first traced
  for (size_t step = 0; step < emulated.steps.size(); ++step) emulated.steps[step].simulated_seconds = simulated[step];
  const auto rows = headline_rows(results);
  EXPECT_NEAR(*rows[1].step_seconds, (0.002 + 0.002 + 0.004) / 3, 1e-12);
}

// A roof below what an op of the run reached is raised to that op, so that no
// utilization exceeds 100 %; an op timed over less than 1 ms does not count.
TEST(BackendPeak, ARoofIsTheRateTheRunsBestOpReached) {
  RunResult run;
  run.peak.device = "/job:localhost/replica:0/task:0/device:CPU:0";
  run.peak.peak_flops_per_second = 86e9;
  run.peak.bandwidth_bytes_per_second = 10e9;
  run.peak.source = "peak compute: measured";
  run.ops.push_back({"MatMul", "matmul", "/CPU:0", kMeasuredWall, 10, 0.01, 2.05e9, 1e7});  // 205 GFLOP/s
  run.ops.push_back({"Add", "elementwise", "/CPU:0", kMeasuredWall, 1000, 1e-4, 1e6, 1e9});   // too short
  run.ops.push_back({"Relu", "elementwise", "/TPU:0", kMeasuredWall, 10, 0.01, 1e15, 1e15});  // another device
  raise_to_the_runs_best(run.peak, run);
  EXPECT_DOUBLE_EQ(*run.peak.peak_flops_per_second, 2.05e11);
  EXPECT_DOUBLE_EQ(*run.peak.bandwidth_bytes_per_second, 10e9);  // 1e9 bytes/s stays under it
  EXPECT_NE(run.peak.source.find("raised to the run's fastest op, MatMul"), std::string::npos) << run.peak.source;
}

// A run keeps one color from plot to plot, whichever runs a plot leaves out,
// and a bar label too long for the margin is cut at its end, whole on hover.
TEST(SvgCharts, ARunKeepsItsColorAndLongLabelsKeepTheirStart) {
  const svg::RunColors colors({"cpu", "tpu_v4"});
  svg::BarChart only_tpu{"mxu", "MXU", "%", {"tpu_v4"}, {{"Conv2D", {50.0}}}, false};
  EXPECT_NE(svg::bar_chart_svg(only_tpu).find(svg::series_color(1)), std::string::npos);  // tpu_v4's, not the first
  EXPECT_STREQ(svg::series_color("tpu_v4 (/TPU:0)", 0), svg::series_color(1));
  EXPECT_STREQ(svg::series_color("other", 3), svg::series_color(3));
  const std::string label = "Fusion(MUL+DIV+LESS_EQUAL+SELECT+GREATER_EQUAL+SELECT+MUL+ADD+SUB+MUL+ADD+SUB+MUL)";
  svg::BarChart long_label{"hbm", "HBM", "bytes", {"tpu_v4"}, {{label, {1e6}}}, true};
  const std::string text = svg::bar_chart_svg(long_label);
  EXPECT_NE(text.find("<title>" + svg::escape(label) + "</title>Fusion(MUL"), std::string::npos) << text;
}

// The emulator's energy: per step beside the simulated time per step in the
// headline and in results.json, with its parts; a preset without energy
// figures says n/a; the round trip keeps a part that had no figure as null.
TEST(Energy, PerStepEnergyStandsBesideTheSimulatedStepTime) {
  ExperimentResults results = two_runs(50);
  TpuEnergy energy;
  energy.mac_j = 0.25;
  energy.sram_j = 0.125;
  energy.hbm_j = 0.5;
  energy.vector_j = 0.0625;
  energy.link_missing = true;  // all-reduces ran, the preset has no link figure
  energy.total_j = energy.mac_j + energy.sram_j + energy.hbm_j + energy.vector_j;
  results.runs[1].emulator_energy = energy;

  const auto rows = headline_rows(results);
  EXPECT_FALSE(rows[0].energy_joules_per_step);  // the CPU run
  ASSERT_TRUE(rows[1].energy_joules_per_step);
  EXPECT_DOUBLE_EQ(*rows[1].energy_joules_per_step, 0.9375 / 50);

  const std::string markdown = report_markdown(results);
  EXPECT_NE(markdown.find("| run | device | clock | time / step | energy / step | time / epoch |"), std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| tpu_v4 | /TPU:0 | simulated | 300 us | 18.8 mJ |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("= 18.8 mJ per step beside 300 us simulated per step; MACs 250 mJ, SRAM 125 mJ, HBM 500 mJ, "
                          "vector unit 62.5 mJ, links n/a (no figure)"),
            std::string::npos)
      << markdown;

  const std::string text = results_to_json_text(results);
  const nlohmann::json document = nlohmann::json::parse(text);
  const nlohmann::json& headline = document["runs"][1]["headline"]["energy_per_step"];
  EXPECT_DOUBLE_EQ(headline["value"].get<double>(), 0.9375 / 50);
  EXPECT_EQ(headline["unit"], "J");
  EXPECT_TRUE(document["runs"][0]["headline"]["energy_per_step"]["value"].is_null());
  const nlohmann::json& parts = document["runs"][1]["emulator"]["energy"];
  EXPECT_DOUBLE_EQ(parts["total_j"].get<double>(), 0.9375);
  EXPECT_DOUBLE_EQ(parts["hbm_j"].get<double>(), 0.5);
  EXPECT_TRUE(parts["link_j"].is_null());
  const ExperimentResults back = results_from_json_text(text);
  ASSERT_TRUE(back.runs[1].emulator_energy);
  EXPECT_TRUE(back.runs[1].emulator_energy->link_missing);
  EXPECT_FALSE(back.runs[1].emulator_energy->vector_missing);
  EXPECT_EQ(results_to_json_text(back), text);

  // A preset without energy figures: no column, and the run says why.
  results.runs[1].emulator_energy.reset();
  const std::string without = report_markdown(results);
  EXPECT_EQ(without.find("energy / step"), std::string::npos);
  EXPECT_NE(without.find("- emulator energy: n/a (the preset has no energy figures"), std::string::npos) << without;
  EXPECT_TRUE(nlohmann::json::parse(results_to_json_text(results))["runs"][1]["emulator"]["energy"].is_null());
}

TEST(MetricsCsv, OneRowPerStepAndEpoch) {
  const std::string csv = metrics_csv_text(two_runs(7));
  size_t lines = 0;
  for (char c : csv) lines += c == '\n';
  EXPECT_EQ(lines, 1u + 2 * (7 + 1));
}

TEST(SvgCharts, DrawMarksAndSayWhyWhenEmpty) {
  svg::LineChart line{"l", "title", "x", "y", {{"a", {0, 1, 2}, {1, 2, 3}, false}}, false};
  EXPECT_NE(svg::line_chart_svg(line).find("class=\"series\""), std::string::npos);
  line.series.clear();
  EXPECT_NE(svg::line_chart_svg(line).find("no data"), std::string::npos);
  svg::BarChart bars{"b", "title", "ms", {"a", "b"}, {{"g", {1.0, std::nullopt}}}, false};
  EXPECT_NE(svg::bar_chart_svg(bars).find("class=\"bar\""), std::string::npos);
  svg::RooflineChart roof{"r", "title", {{"cpu", 1e11, 1e10}}, {{"MatMul", 0, 10, 5e10}}};
  const std::string roofline = svg::roofline_svg(roof);
  EXPECT_NE(roofline.find("class=\"roof\""), std::string::npos);
  EXPECT_NE(roofline.find("class=\"op\""), std::string::npos);
}

TEST(SvgCharts, LongSeriesAreReducedPerPixelColumn) {
  svg::LineSeries series{"a", {}, {}, false};
  for (int i = 0; i < 100000; ++i) {
    series.x.push_back(i);
    series.y.push_back(i % 7);
  }
  const std::string text = svg::line_chart_svg({"l", "t", "x", "y", {series}, false});
  EXPECT_LT(text.size(), 100000u);
}

TEST(ReportHtml, EveryPlotIsAFigureWithAnSvg) {
  const ExperimentResults results = two_runs(30);
  const std::string html = report_html(results);
  for (const std::string& id : report_plot_ids(results)) {
    EXPECT_NE(html.find("<figure class=\"plot\" id=\"" + id + "\"><svg"), std::string::npos) << id;
  }
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("no GPU device here"), std::string::npos);
}

TEST(CompareReport, MatchesRunsByName) {
  const std::string text = compare_markdown(two_runs(10), "a", two_runs(10), "b");
  EXPECT_NE(text.find("| cpu |"), std::string::npos);
  EXPECT_NE(text.find("| 1x |"), std::string::npos);
}

TEST(TraceMerge, OneProcessPerRunAndTrack) {
  const std::vector<TraceSpan> spans = {{"host", "train step 0", "step", 0, 0.01, ""},
                                        {"/TPU:0 (simulated)", "MatMul", "matmul", 0, 1e-5, "{\"flops\":1}"}};
  const auto back = trace_spans_from_json_text(trace_spans_to_json_text(spans));
  ASSERT_EQ(back.size(), 2u);
  const nlohmann::json trace = nlohmann::json::parse(merged_chrome_trace({{"a", back}, {"b", back}}));
  int processes = 0;
  for (const auto& event : trace["traceEvents"]) processes += event["name"] == "process_name";
  EXPECT_EQ(processes, 4);
}

// Plots thin each series to a few points per pixel column, so the report of a
// 10,000-step run is about as large as that of a 1,000-step run. (Its speed is
// measured by bench/experiment/report_bench.cpp, not asserted here.)
TEST(ReportSize, TenThousandStepsStayAsSmallAsOneThousand) {
  auto html_size = [](int64_t steps) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                      ("accel_report_size_" + std::to_string(::getpid()) + "_" + std::to_string(steps));
    write_report_files(two_runs(steps), dir.string());
    const auto size = std::filesystem::file_size(dir / "report.html");
    std::filesystem::remove_all(dir);
    return static_cast<double>(size);
  };
  EXPECT_LT(html_size(10000), 1.5 * html_size(1000));
}

}  // namespace
}  // namespace accel::experiment
