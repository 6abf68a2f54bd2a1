// BackupAndRestore (keras.callbacks.BackupAndRestore): fault tolerance for
// fit. It saves the model's weights, the optimizer's state (iterations and
// slots) and the training position to <backup_dir>/checkpoint.safetensors
// at every epoch end, and every save_freq batches when set. When fit starts
// with a backup present (the previous run was killed or failed), it restores
// all of it and fit resumes at the saved epoch and batch, replaying the data
// up to there without training, so that with deterministic kernels the
// resumed run ends with bitwise the weights of an uninterrupted one. When fit
// ends normally (all epochs or a stop by a callback) the backup is deleted.
//
//   model.build({kUnknownDim, 8});   // restoring needs the weights to exist
//   model.fit(x, y, {.epochs = 10, .callbacks = {std::make_shared<keras::BackupAndRestore>(
//                                       "/tmp/backup", keras::BackupAndRestoreOptions{.save_freq = 100})}});
//
// Each save replaces the file atomically, so a kill at any moment leaves the
// previous backup whole. While fit runs, the backup folder is locked: a second
// run on the same folder fails at once (FailedPreconditionError) instead of
// racing this one. A backup whose position does not fit this fit (an epoch
// past `epochs`, a step past the epoch's length) is refused with the file named. What is not saved: other callbacks' state, Dropout's
// random stream position, a Dataset's position (it is replayed from the start
// of its pass).
#pragma once

#include <accel/keras/callbacks/callback.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace accel::keras {
namespace detail {
class FolderLock;
}

struct BackupAndRestoreOptions {
  // Also save every this many batches (counted since the last save); unset:
  // at epoch ends only (Keras's save_freq="epoch").
  std::optional<int64_t> save_freq;
  // Delete the backup when fit ends normally.
  bool delete_checkpoint = true;
};

class BackupAndRestore final : public Callback {
 public:
  explicit BackupAndRestore(std::string backup_dir, BackupAndRestoreOptions options = {});
  ~BackupAndRestore() override;

  void on_train_begin(const Logs& logs) override;
  void on_epoch_begin(int epoch, const Logs& logs) override;
  void on_train_batch_end(int64_t batch, const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_train_end(const Logs& logs) override;

  // <backup_dir>/checkpoint.safetensors.
  std::string checkpoint_path() const;

 private:
  // Saves the state and the position to resume at: `epoch`, after `step` batches.
  void save_backup(int epoch, int64_t step);

  std::string backup_dir_;
  BackupAndRestoreOptions options_;
  int current_epoch_ = 0;
  int64_t batches_since_save_ = 0;
  std::unique_ptr<detail::FolderLock> lock_;  // held from on_train_begin to on_train_end
};

}  // namespace accel::keras
