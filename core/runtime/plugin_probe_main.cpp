// accel-plugin-probe: loads one plugin file in a process of its own, as audio
// and video plugin hosts scan plugins, so that a plugin that crashes, hangs
// or eats memory while loading takes down this process instead of the host.
// The host (plugin_probe.cpp) starts it for each new or changed plugin file,
// bounds its time, and reads which loading step it reached.
//
//   accel-plugin-probe PLUGIN MINIMUM_MINOR MEMORY_MIB REPORT_FD
//
// It runs exactly what the host's loader runs (load_plugin: dlopen, the entry
// point, the table, initialize, the device count and every device's
// description) and writes to REPORT_FD one line per step ("step initialize")
// and "done" at the end, whatever the plugin's verdict (a plugin that reports
// zero devices is safe to load). Memory (RLIMIT_DATA) is bounded to
// MEMORY_MIB; running out of it ends the process with "out-of-memory". It
// dies with the host (PR_SET_PDEATHSIG). Its stdout and stderr, which the
// plugin may write to, are not part of the protocol.
#include "runtime/plugin_loader.hpp"
#include "runtime/sanitizers.hpp"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

namespace {

int report_fd = -1;

void report(const char* text) {
  const std::string line = std::string(text) + "\n";
  (void)!::write(report_fd, line.data(), line.size());
}

void on_step(const char* step) { report((std::string("step ") + step).c_str()); }

[[noreturn]] void on_out_of_memory() {
  const char text[] = "out-of-memory\n";  // no allocation here
  (void)!::write(report_fd, text, sizeof(text) - 1);
  ::_exit(3);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    const char usage[] = "usage: accel-plugin-probe PLUGIN MINIMUM_MINOR MEMORY_MIB REPORT_FD (started by accel)\n";
    (void)!::write(STDERR_FILENO, usage, sizeof(usage) - 1);
    return 2;
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  report_fd = std::atoi(argv[4]);
  const auto minimum_minor = static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10));
  const rlim_t memory = static_cast<rlim_t>(std::strtoull(argv[3], nullptr, 10)) << 20;
  // Under AddressSanitizer or ThreadSanitizer the shadow memory alone is far
  // beyond any such bound: no limit there (the time bound still holds).
  if (memory > 0 && !ACCEL_UNDER_SANITIZER) {
    const rlimit limit{memory, memory};
    ::setrlimit(RLIMIT_DATA, &limit);
  }
  std::set_new_handler(on_out_of_memory);
  (void)accel::detail::load_plugin(argv[1], minimum_minor, on_step);
  report("done");
  std::fflush(nullptr);
  ::_exit(0);  // skip static destructors: a plugin's may be what misbehaves
}
