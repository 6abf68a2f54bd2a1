#include "callback_factory.hpp"

#include <accel/error.hpp>
#include <accel/keras/callbacks/backup_and_restore.hpp>
#include <accel/keras/callbacks/csv_logger.hpp>
#include <accel/keras/callbacks/early_stopping.hpp>
#include <accel/keras/callbacks/model_checkpoint.hpp>
#include <accel/keras/callbacks/reduce_lr_on_plateau.hpp>
#include <accel/keras/callbacks/terminate_on_nan.hpp>

#include <fmt/format.h>

namespace accel::experiment {
namespace {

// The schema gives every argument its value or default; these read them.
const Value* set_argument(const KerasObject& object, const char* key) {
  const Value* value = object.argument(key);
  return value != nullptr && value->is_set() ? value : nullptr;
}
std::string text_or(const KerasObject& object, const char* key, std::string fallback) {
  const Value* value = set_argument(object, key);
  return value ? value->as_text() : fallback;
}
double number_or(const KerasObject& object, const char* key, double fallback) {
  const Value* value = set_argument(object, key);
  return value ? value->as_number() : fallback;
}
int64_t integer_or(const KerasObject& object, const char* key, int64_t fallback) {
  const Value* value = set_argument(object, key);
  return value ? value->as_int() : fallback;
}
bool flag_or(const KerasObject& object, const char* key, bool fallback) {
  const Value* value = set_argument(object, key);
  return value ? value->as_bool() : fallback;
}

keras::CallbackPointer make_callback(const KerasObject& callback) {
  if (callback.name == "early_stopping") {
    return std::make_shared<keras::EarlyStopping>(
        keras::EarlyStoppingOptions{.monitor = text_or(callback, "monitor", "loss"),
                                    .min_delta = number_or(callback, "min_delta", 0),
                                    .patience = static_cast<int>(integer_or(callback, "patience", 0)),
                                    .mode = text_or(callback, "mode", "auto"),
                                    .restore_best_weights = flag_or(callback, "restore_best_weights", false)});
  }
  if (callback.name == "model_checkpoint") {
    return std::make_shared<keras::ModelCheckpoint>(
        text_or(callback, "filepath", "checkpoint"),
        keras::ModelCheckpointOptions{.monitor = text_or(callback, "monitor", "loss"),
                                      .save_best_only = flag_or(callback, "save_best_only", false),
                                      .save_weights_only = flag_or(callback, "save_weights_only", true),
                                      .mode = text_or(callback, "mode", "auto")});
  }
  if (callback.name == "csv_logger") {
    const std::string separator = text_or(callback, "separator", ",");
    if (separator.size() != 1) {
      throw InvalidArgumentError(fmt::format("csv_logger: separator must be one character, got '{}'", separator));
    }
    return std::make_shared<keras::CSVLogger>(text_or(callback, "filename", "training.csv"), separator.front(),
                                              flag_or(callback, "append", false));
  }
  if (callback.name == "reduce_lr_on_plateau") {
    return std::make_shared<keras::ReduceLROnPlateau>(
        keras::ReduceLROnPlateauOptions{.monitor = text_or(callback, "monitor", "loss"),
                                        .factor = number_or(callback, "factor", 0.1),
                                        .patience = static_cast<int>(integer_or(callback, "patience", 10)),
                                        .mode = text_or(callback, "mode", "auto"),
                                        .min_lr = number_or(callback, "min_lr", 0)});
  }
  if (callback.name == "terminate_on_nan") return std::make_shared<keras::TerminateOnNaN>();
  if (callback.name == "backup_and_restore") {
    keras::BackupAndRestoreOptions options;
    if (const Value* frequency = set_argument(callback, "save_freq");
        frequency && std::holds_alternative<std::int64_t>(frequency->data)) {
      options.save_freq = frequency->as_int();
    }
    return std::make_shared<keras::BackupAndRestore>(text_or(callback, "backup_dir", "backup"), options);
  }
  throw InvalidArgumentError(fmt::format("unknown callback '{}'", callback.name));
}

}  // namespace

std::vector<keras::CallbackPointer> make_callbacks(const std::vector<KerasObject>& callbacks) {
  std::vector<keras::CallbackPointer> made;
  for (const KerasObject& callback : callbacks) made.push_back(make_callback(callback));
  return made;
}

}  // namespace accel::experiment
