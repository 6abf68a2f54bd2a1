// Internal: which way a monitored value improves, resolved from `mode` as
// Keras 2 resolves it. The two callbacks resolve "auto" differently, and
// each keeps its own rule:
//   ModelCheckpoint: higher is better when "acc" occurs anywhere in the name
//                    or it starts with "fmeasure";
//   EarlyStopping:   higher is better when the name ends with "acc",
//                    "accuracy" or "auc".
// An unknown mode warns and falls back to "auto", as Keras does.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace accel::keras::detail {

enum class MonitorDirection { kLowerIsBetter, kHigherIsBetter };

MonitorDirection resolve_checkpoint_direction(const std::string& callback, const std::string& monitor,
                                              const std::string& mode);
MonitorDirection resolve_early_stopping_direction(const std::string& callback, const std::string& monitor,
                                                  const std::string& mode);

// "loss,accuracy,val_loss": the logged names, for "not available" warnings.
std::string available_log_names(const std::map<std::string, double>& logs);

}  // namespace accel::keras::detail
