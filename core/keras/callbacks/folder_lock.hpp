// An exclusive, advisory lock on a folder (flock on the folder itself), held
// by one process at a time. BackupAndRestore holds one on its backup folder
// while fit runs, so that a second run pointed at the same folder fails at
// once instead of racing the first for the checkpoint. The kernel drops the
// lock when the holder exits, however it exits (SIGKILL included), so a
// killed run never leaves a stale lock behind. Locking the folder rather than
// a file in it leaves nothing to clean up.
#pragma once

#include <string>

namespace accel::keras::detail {

class FolderLock {
 public:
  FolderLock() = default;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  ~FolderLock() { release(); }

  // Takes the lock on `folder` (which must exist) without waiting; throws
  // FailedPreconditionError naming `owner` and the folder when another
  // process (or another FolderLock) holds it. Holding a lock already: no-op.
  void acquire(const std::string& folder, const std::string& owner);
  void release();
  bool held() const { return descriptor_ >= 0; }

 private:
  int descriptor_ = -1;
};

}  // namespace accel::keras::detail
