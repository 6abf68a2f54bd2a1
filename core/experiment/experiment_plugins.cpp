// register_plugins: an experiment's `plugins` registered with the runtime
// before it discovers plugins, so that they come first in discovery order.
#include <accel/error.hpp>
#include <accel/experiment/experiment_loader.hpp>
#include <accel/runtime.hpp>

#include <fmt/format.h>

#include <filesystem>

namespace accel::experiment {

void register_plugins(const std::vector<PluginReference>& plugins) {
  for (const PluginReference& plugin : plugins) {
    try {
      if (plugin.required) {
        runtime::require_plugin(plugin.path);
      } else {
        runtime::add_plugin_path(plugin.path);
      }
    } catch (const FailedPreconditionError&) {
      // Discovery already ran in this process: fine if that plugin is loaded.
      std::error_code error;
      const std::string wanted = std::filesystem::weakly_canonical(plugin.path, error).string();
      bool loaded = false;
      for (const runtime::LoadedPlugin& each : runtime::loaded_plugins()) {
        loaded = loaded || std::filesystem::weakly_canonical(each.path, error).string() == wanted;
      }
      if (!loaded && plugin.required) {
        throw ExperimentError(plugin.where, fmt::format("plugin '{}' cannot be loaded: this process already "
                                                        "discovered its plugins without it",
                                                        plugin.path),
                              "the experiment run in a new process (accel run does this)");
      }
    }
  }
}

}  // namespace accel::experiment
