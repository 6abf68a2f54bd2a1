// End to end: `accel run configs/quickstart.yaml` on the CPU and the TPU
// emulator, compiled and eager (the GPU run is skipped with its reason when
// there is no GPU), then every file of the results directory against
// results.json, `accel report` regeneration, `accel compare`, validation errors, --require,
// Ctrl-C leaving a valid partial report, and the HTML report rendered by
// headless Chromium (skipped with the reason when `chromium` is absent).
// Label "slow": a few small training runs.
#include <accel/experiment/headline.hpp>
#include <accel/experiment/report_html.hpp>
#include <accel/experiment/results_json.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_test_support.hpp"

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace accel::experiment {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::CommandResult;
using testing::have_fashion_mnist;
using testing::read_text;
using testing::run_named;
using testing::run_shell;
using testing::scratch_dir;

const std::string kAccel = ACCEL_CLI_PATH;
const std::string kQuickstart = std::string(EXPERIMENT_SOURCE_DIR) + "/configs/quickstart.yaml";

bool have_gpu() { return run_shell(kAccel + " devices").output.find("GPU:0") != std::string::npos; }

class QuickstartRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!have_fashion_mnist()) return;
    directory_ = scratch_dir("quickstart");
    run_ = run_shell(kAccel + " run " + kQuickstart + " --out " + directory_.string() +
                     " --set training.steps_per_epoch=6 --profile-steps 3");
  }
  void SetUp() override {
    if (!have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST is not installed (tools/setup.sh installs it)";
    ASSERT_EQ(run_.code, 0) << run_.output;
  }
  static json results() { return json::parse(read_text(directory_ / "results.json")); }
  static inline fs::path directory_;
  static inline CommandResult run_;
};

TEST_F(QuickstartRun, ResultsHoldEveryRunsFiguresWithUnits) {
  const json document = results();
  EXPECT_EQ(document["format"], "accel-experiment-results");
  EXPECT_TRUE(document["units"].contains("wall_seconds"));
  ASSERT_EQ(document["runs"].size(), 4u);
  for (const char* name : {"cpu", "tpu_v4", "tpu_v4_eager"}) {
    const json& run = run_named(document, name);
    EXPECT_EQ(run["status"], "completed") << run["reason"];
    EXPECT_EQ(run["steps"].size(), 6u);
    const json& headline = run["headline"];
    for (const char* figure : {"step_time", "epoch_time", "throughput", "final_accuracy", "ratio_to_first"}) {
      EXPECT_TRUE(headline[figure]["value"].is_number()) << name << " " << figure;
      EXPECT_FALSE(headline[figure]["unit"].get<std::string>().empty());
    }
    EXPECT_GT(run["evaluation"]["accuracy"].get<double>(), 0.1);
    EXPECT_EQ(run["profiled_steps"], 3);
    EXPECT_FALSE(run["ops"].empty());
    EXPECT_TRUE(run["peak"]["peak_flops_per_second"].is_number());
    EXPECT_FALSE(run["peak"]["source"].get<std::string>().empty());
  }
  EXPECT_EQ(run_named(document, "cpu")["headline"]["time_source"], "measured wall");
  EXPECT_EQ(run_named(document, "tpu_v4")["headline"]["time_source"], "simulated");
  EXPECT_TRUE(run_named(document, "tpu_v4")["emulator"]["simulated_seconds"].is_number());
  EXPECT_DOUBLE_EQ(run_named(document, "cpu")["headline"]["ratio_to_first"]["value"].get<double>(), 1.0);
  // training.jit_compile: auto compiles the CPU and TPU runs; tpu_v4_eager writes false.
  for (const char* name : {"cpu", "tpu_v4"}) {
    const json& step = run_named(document, name)["compiled_step"];
    EXPECT_EQ(step["setting"], "auto") << name;
    EXPECT_EQ(step["jit_compile"], true) << name;
    EXPECT_EQ(step["eager_reason"], "") << name;
    EXPECT_EQ(step["traces"], 1) << name;
    EXPECT_EQ(step["replays"], 6) << name;  // every step, the traced one too
  }
  EXPECT_EQ(run_named(document, "tpu_v4_eager")["compiled_step"]["jit_compile"], false);
  for (const char* name : {"tpu_v4", "tpu_v4_eager"}) {
    EXPECT_GT(run_named(document, name)["headline"]["hbm_traffic_per_step"]["value"].get<double>(), 0) << name;
  }
  const json& gpu = run_named(document, "gpu");
  if (!have_gpu()) {
    EXPECT_EQ(gpu["status"], "skipped");
    EXPECT_NE(gpu["reason"].get<std::string>().find("GPU"), std::string::npos);
    EXPECT_NE(run_.output.find("gpu: skipped: "), std::string::npos) << run_.output;
  }
}

TEST_F(QuickstartRun, MetricsCsvHasARowPerStepAndEpoch) {
  std::istringstream csv(read_text(directory_ / "metrics.csv"));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line.rfind("run,kind,epoch,step,wall_seconds,device_seconds,simulated_seconds,all_reduce_seconds,loss", 0), 0u)
      << line;
  std::map<std::string, int> rows;
  while (std::getline(csv, line)) rows[line.substr(0, line.find(',', line.find(',') + 1))]++;
  EXPECT_EQ(rows["cpu,step"], 6);
  EXPECT_EQ(rows["tpu_v4,step"], 6);
  EXPECT_EQ(rows["tpu_v4_eager,step"], 6);
  EXPECT_EQ(rows["cpu,epoch"], 1);
  EXPECT_EQ(rows["tpu_v4,epoch"], 1);
}

TEST_F(QuickstartRun, TraceHasEventsFromTheCpuAndTheEmulatedTpu) {
  const json trace = json::parse(read_text(directory_ / "trace.json"));
  std::map<int, std::string> process_names;
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "process_name") process_names[event["pid"]] = event["args"]["name"];
  }
  std::map<std::string, int> op_events;
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] == "X") op_events[process_names[event["pid"]]]++;
  }
  EXPECT_GT(op_events["cpu: /CPU:0 (measured wall)"], 0);
  EXPECT_GT(op_events["tpu_v4: /TPU:0 (simulated)"], 0);
  EXPECT_GT(op_events["cpu: host"], 0);
}

TEST_F(QuickstartRun, ReportsHoldTheHeadlineNumbersOfResultsJson) {
  const ExperimentResults results = read_results_json((directory_ / "results.json").string());
  const std::string markdown = read_text(directory_ / "report.md");
  const std::string html = read_text(directory_ / "report.html");
  EXPECT_NE(markdown.find("| run | device | clock | time / step"), std::string::npos);
  EXPECT_NE(markdown.find("## Compiled steps"), std::string::npos);
  EXPECT_NE(markdown.find("- HBM traffic per training step: `tpu_v4_eager` (eager) "), std::string::npos) << markdown;
  EXPECT_NE(html.find("id=\"headline\""), std::string::npos);
  for (const HeadlineRow& row : headline_rows(results)) {
    if (!row.step_seconds) continue;
    const std::string step = format_seconds(*row.step_seconds);
    EXPECT_NE(markdown.find("| " + row.run + " | " + row.device + " | " + row.time_source + " | " + step + " |"),
              std::string::npos)
        << row.run << " " << step;
    EXPECT_NE(html.find("<td>" + step + "</td>"), std::string::npos) << step;
  }
  for (const std::string& id : report_plot_ids(results)) {
    EXPECT_NE(html.find("<figure class=\"plot\" id=\"" + id + "\"><svg"), std::string::npos) << id;
  }
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no network references
}

TEST_F(QuickstartRun, ReportRegenerationGivesTheSameFiles) {
  const fs::path copy = scratch_dir("regenerated");
  fs::create_directories(copy);
  fs::copy_file(directory_ / "results.json", copy / "results.json");
  const CommandResult report = run_shell(kAccel + " report " + copy.string());
  ASSERT_EQ(report.code, 0) << report.output;
  for (const char* file : {"report.md", "report.html", "metrics.csv"}) {
    EXPECT_EQ(read_text(copy / file), read_text(directory_ / file)) << file;
  }
}

TEST_F(QuickstartRun, CompareShowsBothDirectoriesSideBySide) {
  const CommandResult compare = run_shell(kAccel + " compare " + directory_.string() + " " + directory_.string());
  ASSERT_EQ(compare.code, 0) << compare.output;
  EXPECT_NE(compare.output.find("| cpu |"), std::string::npos) << compare.output;
  EXPECT_NE(compare.output.find("| tpu_v4 |"), std::string::npos);
  EXPECT_NE(compare.output.find("| 1x |"), std::string::npos);
}

TEST_F(QuickstartRun, ChromiumRendersEveryPlot) {
  if (run_shell("command -v chromium").code != 0) {
    GTEST_SKIP() << "chromium is not installed (Debian package `chromium`); the HTML report was not checked in a browser";
  }
  const std::string flags = " --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=2000 ";
  const CommandResult dom = run_shell("chromium" + flags + "--dump-dom file://" + (directory_ / "report.html").string() +
                                      " 2>/dev/null");
  ASSERT_EQ(dom.code, 0) << dom.output;
  const ExperimentResults results = read_results_json((directory_ / "results.json").string());
  for (const std::string& id : report_plot_ids(results)) {
    const size_t figure = dom.output.find("id=\"" + id + "\"");
    ASSERT_NE(figure, std::string::npos) << id << " missing in the rendered DOM";
    const size_t end = dom.output.find("</figure>", figure);
    const std::string plot = dom.output.substr(figure, end - figure);
    EXPECT_NE(plot.find("<svg"), std::string::npos) << id;
    const bool has_marks = plot.find("class=\"series\"") != std::string::npos || plot.find("class=\"bar\"") != std::string::npos ||
                           plot.find("class=\"op\"") != std::string::npos;
    EXPECT_TRUE(has_marks) << id << " has no data marks";
  }
  const fs::path screenshot = directory_ / "report.png";
  const CommandResult shot = run_shell("cd " + directory_.string() + " && chromium" + flags +
                                       "--window-size=1200,4000 --screenshot=" + screenshot.string() + " file://" +
                                       (directory_ / "report.html").string());
  EXPECT_TRUE(fs::exists(screenshot)) << shot.output;
  EXPECT_GT(fs::file_size(screenshot), 50000u);  // a page of plots, not a blank one
}

TEST(ExperimentRun, ValidationErrorExitsTwoAndWritesNothing) {
  const fs::path bad = scratch_dir("bad") ;
  fs::create_directories(bad);
  std::ofstream(bad / "bad.yaml") << "name: bad\nmodel: {layers: [{dense: {units: -1}}]}\n";
  const fs::path out = bad / "out";
  const CommandResult result = run_shell(kAccel + " run " + (bad / "bad.yaml").string() + " --out " + out.string());
  EXPECT_EQ(result.code, 2) << result.output;
  EXPECT_NE(result.output.find("bad.yaml:"), std::string::npos) << result.output;
  EXPECT_FALSE(fs::exists(out));
}

TEST(ExperimentRun, RequireTurnsASkippedRunIntoAFailure) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is present: the gpu run is not skipped";
  const fs::path out = scratch_dir("require");
  const CommandResult result = run_shell(kAccel + " run " + kQuickstart + " --out " + out.string() +
                                         " --require --set compare.cpu.device=/GPU:0 --set compare.tpu_v4.device=/GPU:0" +
                                         " --set compare.tpu_v4_eager.device=/GPU:0");
  EXPECT_EQ(result.code, 1) << result.output;
  EXPECT_NE(result.output.find("--require"), std::string::npos) << result.output;
  EXPECT_TRUE(fs::exists(out / "report.md"));
}

TEST(ExperimentRun, InterruptLeavesAValidPartialReport) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST is not installed";
  // The log lives in a fresh folder: one left by an earlier process of the
  // same pid would already name the TPU run before this one started.
  const fs::path folder = scratch_dir("interrupt");
  fs::create_directories(folder);
  const fs::path out = folder / "out";
  const fs::path log = folder / "log.txt";
  // The cpu run is short; the TPU run long enough to be interrupted in fit.
  const std::string command = "exec " + kAccel + " run " + kQuickstart + " --out " + out.string() +
                              " --set training.steps_per_epoch=4 --set compare.tpu_v4.training.steps_per_epoch=2000 > " +
                              log.string() + " 2>&1";
  const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
  pid_t child = 0;
  ASSERT_EQ(::posix_spawn(&child, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(4);
  while (read_text(log).find("tpu_v4: TPU v4") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));  // into the TPU run's training
  ::kill(child, SIGINT);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << read_text(log);
  EXPECT_EQ(WEXITSTATUS(status), 130) << read_text(log);
  const json document = json::parse(read_text(out / "results.json"));
  EXPECT_TRUE(document["interrupted"].get<bool>());
  EXPECT_EQ(document["runs"][0]["status"], "completed");
  EXPECT_EQ(document["runs"][1]["status"], "interrupted") << document["runs"][1]["reason"];
  EXPECT_LT(document["runs"][1]["steps"].size(), 2000u);
  EXPECT_EQ(document["runs"][2]["status"], "not_run");
  EXPECT_NE(read_text(out / "report.md").find("Interrupted"), std::string::npos);
  EXPECT_TRUE(json::accept(read_text(out / "trace.json")));
  EXPECT_FALSE(fs::exists(out / ".parts"));
}

// --- The run's process and the parent's signals.

// A long run on /CPU:0 of synthetic data: it trains until stopped.
fs::path endless_experiment(const fs::path& folder) {
  fs::create_directories(folder);
  std::ofstream(folder / "endless.yaml") << R"(name: endless
model:
  layers:
    - flatten: {input_shape: [8, 8, 1]}
    - dense: {units: 10}
data: {source: synthetic, shape: [8, 8, 1], classes: 10, samples: 256, batch: 16}
training:
  optimizer: sgd
  loss: {sparse_categorical_crossentropy: {from_logits: true}}
  epochs: 1000
compare:
  - {name: cpu, device: /CPU:0}
)";
  return folder / "endless.yaml";
}

// Starts `accel run FILE --out OUT` with its output in LOG; returns its pid.
pid_t start_accel_run(const fs::path& file, const fs::path& out, const fs::path& log) {
  const std::string command = "exec " + kAccel + " run " + file.string() + " --out " + out.string() + " > " +
                              log.string() + " 2>&1";
  const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
  pid_t pid = 0;
  EXPECT_EQ(::posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  return pid;
}

// The run's process: the parent's one child, once it is training (its first
// step's bar is in the log); 0 if none came within a minute.
pid_t training_child(pid_t parent, const fs::path& log) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (std::chrono::steady_clock::now() < deadline) {
    std::istringstream children(read_text("/proc/" + std::to_string(parent) + "/task/" + std::to_string(parent) +
                                          "/children"));
    pid_t child = 0;
    if (children >> child && read_text(log).find("Epoch 1/1000") != std::string::npos) return child;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

// Alive: it exists and is not a zombie waiting for whoever adopted it.
bool alive(pid_t pid) {
  const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  const size_t name_end = stat.rfind(')');
  return name_end != std::string::npos && name_end + 2 < stat.size() && stat[name_end + 2] != 'Z';
}

bool ends_within(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (alive(pid) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return !alive(pid);
}

TEST(ExperimentRun, TheRunDiesWithItsParentWhenTheParentIsKilled) {
  const fs::path folder = scratch_dir("orphan");
  const fs::path log = folder / "log.txt";
  const pid_t parent = start_accel_run(endless_experiment(folder), folder / "out", log);
  const pid_t child = training_child(parent, log);
  ASSERT_GT(child, 0) << "the run did not start: " << read_text(log);
  EXPECT_EQ(::getpgid(child), child) << "the run is not in a process group of its own";
  ::kill(parent, SIGKILL);  // as a scheduler's cancel or the OOM killer does
  int status = 0;
  ::waitpid(parent, &status, 0);
  const bool ended = ends_within(child, std::chrono::seconds(10));
  if (!ended) ::kill(child, SIGKILL);
  EXPECT_TRUE(ended) << "the run trained on after its parent was killed";
}

TEST(ExperimentRun, SigtermStopsTheRunAndWritesTheReportSoFar) {
  const fs::path folder = scratch_dir("sigterm");
  const fs::path log = folder / "log.txt";
  const fs::path out = folder / "out";
  const pid_t parent = start_accel_run(endless_experiment(folder), out, log);
  const pid_t child = training_child(parent, log);
  ASSERT_GT(child, 0) << "the run did not start: " << read_text(log);
  ::kill(parent, SIGTERM);
  int status = 0;
  ::waitpid(parent, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << read_text(log);
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << read_text(log);
  EXPECT_TRUE(ends_within(child, std::chrono::seconds(10)));
  EXPECT_NE(read_text(log).find("stopped by signal 15"), std::string::npos) << read_text(log);
  const json document = json::parse(read_text(out / "results.json"));
  EXPECT_TRUE(document["interrupted"].get<bool>());
  EXPECT_EQ(document["runs"][0]["status"], "interrupted") << document["runs"][0]["reason"];
  EXPECT_NE(document["runs"][0]["reason"].get<std::string>().find("signal 15"), std::string::npos);
}

TEST(ExperimentRun, AnOrphanedRunProcessTrainsNothing) {
  // `--single-run` started for a parent that is already gone exits at once.
  const fs::path folder = scratch_dir("late_orphan");
  const fs::path file = endless_experiment(folder);
  const CommandResult result = run_shell(kAccel + " run " + file.string() + " --single-run cpu --partial-out " +
                                         (folder / "part").string() + " --parent-pid 999999999");
  EXPECT_EQ(result.code, 128 + SIGKILL) << result.output;
  EXPECT_FALSE(fs::exists(folder / "part.result.json"));
}

}  // namespace
}  // namespace accel::experiment
