#include "run_command.hpp"

#include "commands.hpp"
#include "keras_file_inspection.hpp"

#include <accel/experiment/experiment_loader.hpp>
#include <accel/experiment/headline.hpp>
#include <accel/experiment/report_files.hpp>
#include <accel/experiment/results_json.hpp>
#include <accel/experiment/run_executor.hpp>
#include <accel/experiment/trace_merge.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string_view>

#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace accel::cli {
namespace {

namespace fs = std::filesystem;
using experiment::RunResult;
using experiment::RunStatus;

std::atomic<bool> interrupted{false};
std::atomic<int> terminating_signal{0};
std::atomic<pid_t> running_child{0};

// Ctrl-C: remember it and pass it on to the run in progress, which stops
// after its current step and hands back what it measured.
void on_interrupt(int) {
  interrupted = true;
  if (const pid_t child = running_child.load(); child > 0) ::kill(child, SIGINT);
}

// SIGTERM / SIGHUP (in the parent): end the run in progress and everything
// it started (its process group), then write the report so far and exit.
void on_terminate(int signal) {
  interrupted = true;
  terminating_signal = signal;
  if (const pid_t child = running_child.load(); child > 0) ::kill(-child, signal);
}

void install_handler(int signal, void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  ::sigaction(signal, &action, nullptr);
}

void install_interrupt_handler() { install_handler(SIGINT, on_interrupt); }

// In the child: die with the parent. The parent may have died before the
// prctl took effect, in which case this process was already reparented.
bool tie_to_parent(int64_t parent_pid) {
  if (parent_pid <= 0) return true;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  return ::getppid() == static_cast<pid_t>(parent_pid);
}

std::string utc_now(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[64];
  std::strftime(text, sizeof text, format, &parts);
  return text;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// The overall bar across runs: "[=====>        ] 2/3 runs".
std::string overall_bar(size_t done, size_t total) {
  const int width = 20;
  const int filled = total == 0 ? width : static_cast<int>(width * done / total);
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < width) bar += '>' + std::string(static_cast<size_t>(width - filled - 1), ' ');
  return fmt::format("[{}] {}/{} runs", bar, done, total);
}

// --- child mode -------------------------------------------------------------

int run_single(const RunRequest& request, std::ostream& err) {
  if (!tie_to_parent(request.parent_pid)) return 128 + SIGKILL;  // an orphan trains nothing
  experiment::LoadOptions options;
  options.overrides = request.overrides;
  // The parent validated the file against this machine's devices. Here nothing
  // may discover plugins before the run applies its settings (the TPU
  // emulator's hardware is read when its plugin loads).
  options.device_catalog = experiment::validated_device_catalog;
  // The model.keras_file's input shape, which shapes the data to the model
  // (reading the archive starts no runtime).
  inspect_keras_files(options);
  const experiment::Experiment loaded = experiment::load_experiment(request.file, options);
  for (const experiment::RunConfig& run : loaded.runs) {
    if (run.name != request.single_run) continue;
    install_interrupt_handler();
    experiment::RunExecutionOptions execution;
    execution.profiled_steps = request.profiled_steps;
    execution.interrupt = &interrupted;
    const experiment::RunOutput output = experiment::execute_run(run, execution);
    write_text(request.partial_out + ".trace.json", experiment::trace_spans_to_json_text(output.trace));
    // The result last: its presence tells the parent the run handed everything over.
    write_text(request.partial_out + ".result.json.partial", experiment::run_result_to_json_text(output.result));
    fs::rename(request.partial_out + ".result.json.partial", request.partial_out + ".result.json");
    return 0;
  }
  err << fmt::format("accel run: no run named '{}' in {}\n", request.single_run, request.file);
  return 2;
}

// --- parent mode ------------------------------------------------------------

std::vector<std::string> child_arguments(const RunRequest& request, const std::string& run, const std::string& prefix) {
  std::vector<std::string> arguments = {"accel", "run", request.file, "--single-run", run, "--partial-out", prefix,
                                        "--profile-steps", std::to_string(request.profiled_steps),
                                        "--parent-pid", std::to_string(::getpid())};
  for (const std::string& override_text : request.overrides) {
    arguments.push_back("--set");
    arguments.push_back(override_text);
  }
  return arguments;
}

// Runs one run in a child process; returns its result (a failure when the
// child died without handing one over) and its trace spans.
RunResult run_in_child(const RunRequest& request, const experiment::RunConfig& run, size_t index,
                       const fs::path& parts, std::vector<experiment::TraceSpan>& trace) {
  // By index, not name: a sweep's run names hold its values ("gpu[/GPU:0]").
  const std::string prefix = (parts / fmt::format("run-{}", index)).string();
  std::vector<std::string> arguments = child_arguments(request, run.name, prefix);
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  pid_t child = 0;
  std::cout.flush();
  // Its own process group: a signal for the run reaches whatever it started.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  const int spawn_error = ::posix_spawn(&child, "/proc/self/exe", nullptr, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  if (spawn_error != 0) {
    RunResult failed;
    failed.name = run.name;
    failed.status = RunStatus::kFailed;
    failed.reason = fmt::format("cannot start the run's process: {}", std::strerror(spawn_error));
    return failed;
  }
  running_child = child;
  if (const int signal = terminating_signal.load(); signal != 0) ::kill(-child, signal);
  else if (interrupted) ::kill(child, SIGINT);  // Ctrl-C arrived while starting it
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  running_child = 0;
  const fs::path result_file = prefix + ".result.json";
  RunResult failed;
  failed.name = run.name;
  failed.description = run.description;
  if (fs::exists(result_file)) {
    // What the child handed over is read like any input: a damaged file fails
    // this run, never the experiment (the other runs and the report go on).
    try {
      if (fs::exists(prefix + ".trace.json")) trace = experiment::trace_spans_from_json_text(read_text(prefix + ".trace.json"));
      return experiment::run_result_from_json_text(read_text(result_file));
    } catch (const std::exception& error) {
      failed.status = RunStatus::kFailed;
      failed.reason = fmt::format("the run's results ({}) cannot be read: {}", result_file.string(), error.what());
      return failed;
    }
  }
  failed.status = interrupted ? RunStatus::kInterrupted : RunStatus::kFailed;
  failed.reason = WIFSIGNALED(status) ? fmt::format("the run's process was killed by signal {} ({})", WTERMSIG(status),
                                                    strsignal(WTERMSIG(status)))
                                      : fmt::format("the run's process exited with code {} without results",
                                                    WEXITSTATUS(status));
  return failed;
}

void write_everything(const experiment::ExperimentResults& results,
                      const std::vector<std::pair<std::string, std::vector<experiment::TraceSpan>>>& traces,
                      const fs::path& directory) {
  experiment::write_report_files(results, directory.string());
  write_text(directory / "trace.json", experiment::merged_chrome_trace(traces));
}

void print_summary(const experiment::ExperimentResults& results, std::ostream& out) {
  const std::vector<experiment::HeadlineRow> rows = experiment::headline_rows(results);
  // The run column fits the longest name ("tpu_v4_eager", sweep points).
  size_t width = std::string_view("run").size();
  for (const experiment::HeadlineRow& row : rows) width = std::max(width, row.run.size());
  out << fmt::format("\n{:<{}} | status      | time/step                     | throughput      | accuracy\n", "run", width);
  for (const experiment::HeadlineRow& row : rows) {
    std::string step = row.step_seconds ? fmt::format("{} ({})", experiment::format_seconds(*row.step_seconds), row.time_source) : "";
    std::string rate = row.examples_per_second ? fmt::format("{} ex/s", experiment::format_number(*row.examples_per_second)) : "";
    std::string accuracy = row.final_accuracy ? fmt::format("{:.2f} % ({})", *row.final_accuracy * 100, row.accuracy_source) : "";
    out << fmt::format("{:<{}} | {:<11} | {:<29} | {:<15} | {}\n", row.run, width, run_status_name(row.status), step, rate,
                       accuracy);
    if (!row.reason.empty() && row.status != RunStatus::kCompleted) {
      out << fmt::format("{:<{}} ^ {}\n", "", width + 1, row.reason);
    }
  }
}

int run_all(const RunRequest& request, std::ostream& out, std::ostream& err) {
  experiment::LoadOptions options;
  options.overrides = request.overrides;
  inspect_keras_files(options);
  experiment::Experiment loaded;
  try {
    loaded = experiment::load_experiment(request.file, options);
  } catch (const experiment::ExperimentError& error) {
    err << error.what() << "\n";
    return 2;  // nothing written
  }
  // A worker that is not its cluster's chief trains with the others but keeps
  // nothing: its results go to a temporary folder, removed at the end.
  bool chief = true;
  for (const experiment::RunConfig& run : loaded.runs) chief = chief && experiment::writes_results(run);
  const std::string base = loaded.runs.empty() ? "runs/" + loaded.name : loaded.runs.front().output_directory;
  const fs::path directory = !chief              ? fs::temp_directory_path() / fmt::format("accel-worker-{}", ::getpid())
                             : request.out.empty() ? fs::path(base) / utc_now("%Y%m%d-%H%M%S")
                                                   : fs::path(request.out);
  if (!chief) out << "accel run: this process is a worker but not the chief of its cluster; the chief writes the results\n";
  const fs::path parts = directory / ".parts";
  fs::create_directories(parts);
  install_interrupt_handler();
  install_handler(SIGTERM, on_terminate);
  install_handler(SIGHUP, on_terminate);

  experiment::ExperimentResults results;
  results.experiment = loaded.name;
  results.description = loaded.description;
  results.source_file = request.file;
  results.started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  results.overrides = request.overrides;
  std::vector<std::pair<std::string, std::vector<experiment::TraceSpan>>> traces;
  const size_t total = loaded.runs.size();
  for (size_t index = 0; index < total; ++index) {
    const experiment::RunConfig& run = loaded.runs[index];
    RunResult result;
    std::vector<experiment::TraceSpan> trace;
    if (interrupted) {
      result.name = run.name;
      result.description = run.description;
      result.status = RunStatus::kNotRun;
      result.reason = terminating_signal != 0 ? fmt::format("not run: the experiment was stopped by signal {} ({})",
                                                            terminating_signal.load(), strsignal(terminating_signal))
                                              : "not run: the experiment was interrupted (Ctrl-C)";
    } else if (run.skipped_reason) {
      result = experiment::execute_run(run, {}).result;  // skipped without touching the runtime
    } else {
      out << fmt::format("{} {}: {}\n", overall_bar(index, total), run.name, run.description.empty() ? run.name : run.description);
      out.flush();
      result = run_in_child(request, run, index, parts, trace);
    }
    if (result.status == RunStatus::kSkipped) out << fmt::format("{} {}: skipped: {}\n", overall_bar(index + 1, total), run.name, result.reason);
    else if (result.status == RunStatus::kFailed) out << fmt::format("{} {}: FAILED: {}\n", overall_bar(index + 1, total), run.name, result.reason);
    else if (result.status != RunStatus::kNotRun) {
      out << fmt::format("{} {}: {} in {}\n", overall_bar(index + 1, total), run.name, run_status_name(result.status),
                         experiment::format_seconds(result.total_wall_seconds));
    }
    results.runs.push_back(std::move(result));
    traces.emplace_back(run.name, std::move(trace));
    results.interrupted = interrupted;
    // After every run: the report so far is complete and valid.
    write_everything(results, traces, directory);
  }
  fs::remove_all(parts);
  if (!chief) fs::remove_all(directory);
  print_summary(results, out);
  if (chief) out << fmt::format("\nreport: {}\n", (directory / "report.html").string());
  if (const int signal = terminating_signal.load(); signal != 0) {
    err << fmt::format("accel run: stopped by signal {} ({}); the partial report is in {}\n", signal, strsignal(signal),
                       directory.string());
    return 128 + signal;
  }
  if (interrupted) {
    err << "accel run: interrupted; the partial report is in " << directory.string() << "\n";
    return 130;
  }
  int code = 0;
  for (const RunResult& result : results.runs) {
    if (result.status == RunStatus::kFailed) code = 1;
    if (result.status == RunStatus::kSkipped && request.require_all) {
      err << fmt::format("accel run: run '{}' was skipped ({}) and --require was given\n", result.name, result.reason);
      code = 1;
    }
  }
  return code;
}

}  // namespace

int run_experiment(const RunRequest& request, std::ostream& out, std::ostream& err) {
  if (!request.single_run.empty()) return run_single(request, err);
  return run_all(request, out, err);
}

void add_run_command(CLI::App& app) {
  auto request = std::make_shared<RunRequest>();
  CLI::App* command = app.add_subcommand("run", "run an experiment file and write its report (runs/<name>/<timestamp>/)");
  command->add_option("file", request->file, "the experiment YAML file")->required();
  command->add_option("--out", request->out, "the results directory (default runs/<name>/<UTC timestamp>)");
  command->add_option("--set", request->overrides, "override a key before validation: key=value (repeatable)");
  command->add_flag("--require", request->require_all, "fail when a run is skipped (e.g. no GPU here)");
  command->add_option("--profile-steps", request->profiled_steps, "steps profiled op by op after the first (default 20)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--single-run", request->single_run, "internal: run this one run in this process")->group("");
  command->add_option("--partial-out", request->partial_out, "internal: where --single-run writes")->group("");
  command->add_option("--parent-pid", request->parent_pid, "internal: --single-run dies with this process")->group("");
  command->callback([request] {
    const int code = run_experiment(*request, std::cout, std::cerr);
    if (code != 0) throw ExitRequest{code};
  });
}

}  // namespace accel::cli
