// `accel run FILE [--out DIR] [--set key=value]... [--require] [--profile-steps N]`:
// runs every run of an experiment and writes its results directory
// (default runs/<name>/<UTC timestamp>/): results.json, metrics.csv,
// trace.json, report.md, report.html.
//
// Each run executes in a child process (`accel run FILE --single-run NAME
// --partial-out PREFIX`), because the runtime reads device settings (the TPU
// emulator's hardware, memory growth, logical splits) once per process. The
// parent shows an overall bar across runs (the child shows Keras's bar per
// run), merges the children's results and traces, and rewrites the report
// after every run, so Ctrl-C (forwarded to the running child, which stops
// after its current step) leaves a valid partial report. The child runs in a
// process group of its own and dies with the parent (PR_SET_PDEATHSIG): when
// the parent is SIGKILLed (a scheduler's cancel, the OOM killer) no run trains
// on as an orphan, racing a restarted job for its backup and output files.
// SIGTERM or SIGHUP to the parent is passed to the child's group; the report
// so far is written and the exit code is 128 + the signal.
//
// Exit codes: 0 all runs completed or were skipped with a reason; 1 a run
// failed, or --require and a run was skipped; 2 the file is not valid
// (nothing is written); 130 interrupted.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace accel::cli {

struct RunRequest {
  std::string file;
  std::string out;                     // results directory; empty: runs/<name>/<timestamp>
  std::vector<std::string> overrides;  // --set key=value
  bool require_all = false;            // --require: a skipped run is a failure
  int64_t profiled_steps = 20;         // --profile-steps
  // Child mode (internal): run one run and write PREFIX.result.json and PREFIX.trace.json.
  std::string single_run;
  std::string partial_out;
  int64_t parent_pid = 0;  // the parent to die with
};

void add_run_command(CLI::App& app);

int run_experiment(const RunRequest& request, std::ostream& out, std::ostream& err);

}  // namespace accel::cli
