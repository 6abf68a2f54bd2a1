#include <accel/experiment/metrics_csv.hpp>

#include <fmt/format.h>

#include <fstream>
#include <set>
#include <stdexcept>

namespace accel::experiment {
namespace {

std::string field(double value) { return fmt::format("{:.9g}", value); }

std::string quoted(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string result = "\"";
  for (char c : text) result += c == '"' ? std::string("\"\"") : std::string(1, c);
  return result + "\"";
}

}  // namespace

std::string metrics_csv_text(const ExperimentResults& results) {
  // Every log name any run produced, as extra columns after loss.
  std::set<std::string> log_names;
  for (const RunResult& run : results.runs) {
    for (const StepRecord& step : run.steps) {
      for (const auto& [name, value] : step.logs) log_names.insert(name);
    }
    for (const EpochRecord& epoch : run.epochs) {
      for (const auto& [name, value] : epoch.logs) log_names.insert(name);
    }
  }
  log_names.erase("loss");
  std::string text = "run,kind,epoch,step,wall_seconds,device_seconds,simulated_seconds,all_reduce_seconds,loss";
  for (const std::string& name : log_names) text += "," + quoted(name);
  text += "\n";
  text.reserve(text.size() + 96 * results.runs.size() * 1024);
  const auto append_logs = [&](const std::map<std::string, double>& logs) {
    auto loss = logs.find("loss");
    text += "," + (loss == logs.end() ? std::string() : field(loss->second));
    for (const std::string& name : log_names) {
      auto found = logs.find(name);
      text += "," + (found == logs.end() ? std::string() : field(found->second));
    }
    text += "\n";
  };
  for (const RunResult& run : results.runs) {
    const std::string name = quoted(run.name);
    for (const StepRecord& step : run.steps) {
      text += fmt::format("{},step,{},{},{},{},{},{}", name, step.epoch + 1, step.step, field(step.wall_seconds),
                          step.device_seconds ? field(*step.device_seconds) : std::string(),
                          step.simulated_seconds ? field(*step.simulated_seconds) : std::string(),
                          step.all_reduce_seconds ? field(*step.all_reduce_seconds) : std::string());
      append_logs(step.logs);
    }
    for (const EpochRecord& epoch : run.epochs) {
      text += fmt::format("{},epoch,{},,{},,{},", name, epoch.epoch + 1, field(epoch.wall_seconds),
                          epoch.simulated_seconds ? field(*epoch.simulated_seconds) : std::string());
      append_logs(epoch.logs);
    }
  }
  return text;
}

void write_metrics_csv(const ExperimentResults& results, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  out << metrics_csv_text(results);
  if (!out) throw std::runtime_error(path + ": cannot be written");
}

}  // namespace accel::experiment
