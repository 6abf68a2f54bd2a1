// AccelStatus as the host defines it, and the conversion of a plugin's status
// into a typed accel::Error.
#pragma once

#include <accel/plugin/accel_plugin.h>

#include <memory>
#include <string>

struct AccelStatus {
  AccelStatusCode code;
  std::string message;
};

namespace accel::detail {

// A status for a plugin to return (the host API's status_create). The host
// remembers every status it made and not yet freed, so that a pointer a
// plugin returns that is not one of them (garbage, a code cast to a pointer)
// is reported, never dereferenced.
AccelStatus* create_status(AccelStatusCode code, const char* message);
// The status, now owned by the caller, or null when the host did not create it.
std::unique_ptr<AccelStatus> take_status(AccelStatus* status);

// Frees `status`; when it is an error, throws the matching accel::Error with
// "<context>: <plugin message>".
void check_status(AccelStatus* status, const std::string& context);

}  // namespace accel::detail
