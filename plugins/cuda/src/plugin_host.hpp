// The host API the plugin was initialized with, for entry points that get no
// plugin context or device to find it through (extension functions whose
// arguments may all be null must still report a status).
#pragma once

#include <accel/plugin/accel_plugin.h>

namespace accel::cuda {

// Set by initialize (plugin_entry.cpp); null before it.
const AccelHostApi* plugin_host();

}  // namespace accel::cuda
