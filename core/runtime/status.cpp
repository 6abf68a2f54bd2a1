// Status objects crossing the plugin boundary, and typed errors.
#include "runtime/status.hpp"

#include <accel/error.hpp>

#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <unordered_set>

namespace accel {

const char* status_code_name(StatusCode code) noexcept {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "InvalidArgument";
    case StatusCode::kNotFound: return "NotFound";
    case StatusCode::kResourceExhausted: return "ResourceExhausted";
    case StatusCode::kUnimplemented: return "Unimplemented";
    case StatusCode::kInternal: return "Internal";
    case StatusCode::kFailedPrecondition: return "FailedPrecondition";
    case StatusCode::kUnavailable: return "Unavailable";
    case StatusCode::kOutOfRange: return "OutOfRange";
  }
  return "Unknown";
}

void throw_error(StatusCode code, const std::string& message) {
  switch (code) {
    case StatusCode::kInvalidArgument: throw InvalidArgumentError(message);
    case StatusCode::kNotFound: throw NotFoundError(message);
    case StatusCode::kResourceExhausted: throw ResourceExhaustedError(message);
    case StatusCode::kUnimplemented: throw UnimplementedError(message);
    case StatusCode::kFailedPrecondition: throw FailedPreconditionError(message);
    case StatusCode::kUnavailable: throw UnavailableError(message);
    case StatusCode::kOutOfRange: throw OutOfRangeError(message);
    case StatusCode::kOk:
    case StatusCode::kInternal: break;
  }
  throw InternalError(message);
}

namespace detail {
namespace {

struct LiveStatuses {
  std::mutex mutex;
  std::unordered_set<const AccelStatus*> pointers;
};
LiveStatuses& live_statuses() {
  static auto* statuses = new LiveStatuses();  // never destroyed: plugins may report during exit
  return *statuses;
}

}  // namespace

AccelStatus* create_status(AccelStatusCode code, const char* message) {
  auto* status = new AccelStatus{code, message != nullptr ? message : ""};
  LiveStatuses& live = live_statuses();
  std::lock_guard lock(live.mutex);
  live.pointers.insert(status);
  return status;
}

std::unique_ptr<AccelStatus> take_status(AccelStatus* status) {
  LiveStatuses& live = live_statuses();
  std::lock_guard lock(live.mutex);
  if (live.pointers.erase(status) == 0) return nullptr;
  return std::unique_ptr<AccelStatus>(status);
}

void check_status(AccelStatus* status, const std::string& context) {
  if (status == nullptr) return;
  std::unique_ptr<AccelStatus> owned = take_status(status);
  if (owned == nullptr) {
    throw InternalError(fmt::format("{}: the plugin returned a status the host did not create ({}): a plugin bug",
                                    context, static_cast<const void*>(status)));
  }
  auto code = static_cast<StatusCode>(owned->code);
  if (owned->code < ACCEL_STATUS_INVALID_ARGUMENT || owned->code > ACCEL_STATUS_OUT_OF_RANGE) {
    code = StatusCode::kInternal;
  }
  throw_error(code, context + ": " + owned->message);
}

}  // namespace detail
}  // namespace accel
