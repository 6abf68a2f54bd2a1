// FolderLock: flock(LOCK_EX | LOCK_NB) on an O_DIRECTORY descriptor.
#include "folder_lock.hpp"

#include <accel/error.hpp>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace accel::keras::detail {

void FolderLock::acquire(const std::string& folder, const std::string& owner) {
  if (held()) return;
  const int descriptor = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (descriptor < 0) {
    throw FailedPreconditionError(owner + ": cannot open the folder '" + folder + "' to lock it: " + std::strerror(errno));
  }
  int result = 0;
  while ((result = ::flock(descriptor, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
  }
  if (result != 0) {
    const int error = errno;
    ::close(descriptor);
    if (error == EWOULDBLOCK) {
      throw FailedPreconditionError(owner + ": the folder '" + folder +
                                    "' is in use by another run (it holds the folder's lock); two runs must not "
                                    "share a backup folder: give this one its own, or stop the other first");
    }
    throw FailedPreconditionError(owner + ": cannot lock the folder '" + folder + "': " + std::strerror(error));
  }
  descriptor_ = descriptor;
}

void FolderLock::release() {
  if (!held()) return;
  ::close(descriptor_);  // closing the only descriptor drops the flock
  descriptor_ = -1;
}

}  // namespace accel::keras::detail
