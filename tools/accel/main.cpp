// Entry point of the `accel` command line: global options and subcommands.
#include "commands.hpp"
#include "convert_command.hpp"

#include <accel/config.hpp>
#include <accel/error.hpp>
#include <accel/runtime.hpp>

#ifdef HAVE_ACCEL_TPU_TIMING
#include "tpu_estimate_command.hpp"
#endif
#ifdef HAVE_ACCEL_EXPERIMENT
#include "compare_command.hpp"
#include "report_command.hpp"
#include "run_command.hpp"
#include "validate_command.hpp"
#endif
#ifdef HAVE_ACCEL_DISTRIBUTE
#include "launch_command.hpp"
#endif

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

// A command's result reaches its reader only if standard output took it: a
// full disk, a closed pipe or /dev/full turn a successful command into a
// failure that says so, instead of exit 0 with nothing written.
int with_output_checked(int code) {
  errno = 0;
  std::cout.flush();
  const bool failed = std::cout.fail() || std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (!failed) return code;
  const int error = errno;
  std::fprintf(stderr, "accel: error: writing standard output failed: %s\n",
               error != 0 ? std::strerror(error) : "the stream is in a failed state");
  return code == 0 ? 1 : code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"accel: run Keras-style models on plugin backends and compare them"};
  app.require_subcommand(1);
  std::vector<std::string> plugins;
  app.add_option("--plugin", plugins, "a plugin library that must load (repeatable)");
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "log debug messages (plugin discovery, fallbacks)");
  app.parse_complete_callback([&] {
    if (verbose) accel::config::set_setting("log_level", "debug");  // before the runtime logs anything
    for (const std::string& plugin : plugins) accel::runtime::require_plugin(plugin);
  });

  accel::cli::add_devices_command(app);
  accel::cli::add_matmul_command(app);
  accel::cli::add_convert_command(app);
#ifdef HAVE_ACCEL_TPU_TIMING
  accel::cli::add_tpu_command(app);
#endif
#ifdef HAVE_ACCEL_EXPERIMENT
  accel::cli::add_validate_command(app);
  accel::cli::add_run_command(app);
  accel::cli::add_report_command(app);
  accel::cli::add_compare_command(app);
#endif
#ifdef HAVE_ACCEL_DISTRIBUTE
  accel::cli::add_launch_command(app);
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return with_output_checked(app.exit(error) == 0 ? 0 : 2);
  } catch (const accel::cli::ExitRequest& request) {
    return with_output_checked(request.code);
  } catch (const accel::Error& error) {
    std::fprintf(stderr, "accel: %s error: %s\n", accel::status_code_name(error.code()), error.what());
    return with_output_checked(error.code() == accel::StatusCode::kInvalidArgument ? 2 : 1);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "accel: error: %s\n", error.what());
    return with_output_checked(1);
  }
  return with_output_checked(0);
}
