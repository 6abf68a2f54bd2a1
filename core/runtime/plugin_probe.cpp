// Running accel-plugin-probe on one plugin file and reading what it reached
// (see plugin_probe.hpp).
#include "runtime/plugin_probe.hpp"

#include "runtime/logging.hpp"
#include "runtime/plugin_probe_cache.hpp"

#include <boost/dll/runtime_symbol_info.hpp>
#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace accel::detail {
namespace {

int64_t environment_number(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value <= 0) {
    runtime_log().warn("{}='{}' is not a positive integer; using {}", name, text, fallback);
    return fallback;
  }
  return value;
}

std::string signal_text(int signal) {
  const char* abbreviation = ::sigabbrev_np(signal);
  const char* description = ::strsignal(signal);
  return fmt::format("signal {} ({}{}{})", signal, abbreviation ? "SIG" : "", abbreviation ? abbreviation : "",
                     description ? std::string(abbreviation ? ", " : "") + description : "");
}

// The last "step X" the probe reported ("" before the first).
std::string last_step(const std::string& report) {
  std::string step;
  size_t at = 0;
  while ((at = report.find("step ", at)) != std::string::npos) {
    const size_t end = report.find('\n', at);
    if (end == std::string::npos) break;
    step = report.substr(at + 5, end - at - 5);
    at = end;
  }
  return step;
}

bool ends_with_line(const std::string& report, const std::string& line) {
  return report.size() >= line.size() + 1 && report.compare(report.size() - line.size() - 1, line.size() + 1, line + "\n") == 0;
}

}  // namespace

ProbeLimits ProbeLimits::from_environment() {
  ProbeLimits limits;
  limits.timeout_ms = environment_number("ACCEL_PLUGIN_PROBE_TIMEOUT_MS", limits.timeout_ms);
  limits.memory_mib = environment_number("ACCEL_PLUGIN_PROBE_MEMORY_MIB", limits.memory_mib);
  return limits;
}

std::optional<std::filesystem::path> probe_program() {
  if (const char* chosen = std::getenv("ACCEL_PLUGIN_PROBE"); chosen != nullptr && *chosen != '\0') {
    if (std::string_view(chosen) == "off") return std::nullopt;
    return std::filesystem::path(chosen);
  }
  boost::dll::fs::error_code error;
  const auto library = boost::dll::this_line_location(error);
  if (error) return std::nullopt;
  std::filesystem::path program = std::filesystem::path(library.parent_path().string()) / "accel" / "accel-plugin-probe";
  std::error_code missing;
  if (!std::filesystem::exists(program, missing)) return std::nullopt;
  return program;
}

ProbeVerdict probe_plugin(const std::filesystem::path& program, const std::filesystem::path& plugin,
                          uint32_t minimum_minor, const ProbeLimits& limits) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return {true, {}};  // cannot probe: load in process, as without a probe
  }
  // The report descriptor in the probe; dup2 onto another number clears O_CLOEXEC.
  const int report_fd = pipe_fds[1] == 3 ? 4 : 3;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], report_fd);
  std::vector<std::string> arguments = {program.string(), plugin.string(), std::to_string(minimum_minor),
                                        std::to_string(limits.memory_mib), std::to_string(report_fd)};
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  pid_t child = 0;
  const int spawn_error = ::posix_spawn(&child, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawn_error != 0) {
    ::close(pipe_fds[0]);
    runtime_log().debug("cannot start the plugin probe {}: {}", program.string(), std::strerror(spawn_error));
    return {true, {}};
  }

  std::string report;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd waiting{pipe_fds[0], POLLIN, 0};
    const int ready = ::poll(&waiting, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline is checked above
    char buffer[4096];
    const ssize_t got = ::read(pipe_fds[0], buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // end of the report: the probe exited (or closed it)
    if (report.size() < (1 << 16)) report.append(buffer, static_cast<size_t>(got));
  }
  ::close(pipe_fds[0]);
  if (timed_out) ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }

  const std::string step = last_step(report);
  const std::string where = step.empty() ? "before loading it" : "in " + step;
  if (timed_out) {
    return {false, fmt::format("the plugin did not finish loading within {} ms (stuck {}) in the probe process",
                               limits.timeout_ms, where)};
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && ends_with_line(report, "done")) return {true, {}};
  if (ends_with_line(report, "out-of-memory")) {
    return {false, fmt::format("the plugin used more than the probe's {} MiB of memory {}", limits.memory_mib, where)};
  }
  if (WIFSIGNALED(status)) {
    return {false, fmt::format("the plugin crashed the probe process with {} {}", signal_text(WTERMSIG(status)), where)};
  }
  return {false, fmt::format("the probe process exited with code {} {} without finishing",
                             WIFEXITED(status) ? WEXITSTATUS(status) : -1, where)};
}

ProbeVerdict plugin_verdict(const std::filesystem::path& plugin, uint32_t minimum_minor) {
  const std::optional<std::filesystem::path> program = probe_program();
  if (!program) return {true, {}};
  const std::optional<PluginFileIdentity> file = PluginFileIdentity::of(plugin);
  if (!file) return {true, {}};  // unreadable: the loader says why
  if (std::optional<ProbeVerdict> cached = cached_verdict(*file)) {
    if (!cached->safe) cached->reason += " (cached; ACCEL_PLUGIN_RESCAN=1 probes it again)";
    return *cached;
  }
  const ProbeVerdict verdict = probe_plugin(*program, plugin, minimum_minor, ProbeLimits::from_environment());
  runtime_log().debug("probed plugin {}: {}", plugin.string(), verdict.safe ? "safe" : verdict.reason);
  store_verdict(*file, verdict);
  return verdict;
}

}  // namespace accel::detail
