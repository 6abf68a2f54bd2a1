// `accel convert IN OUT [--model ARCH.keras]`: converts between Keras 3's
// .keras archives and .weights.h5 files and accel's safetensors weights, the
// format of each file told by its suffix. A weights-only IN needs the
// architecture from --model (a .keras file); a .keras IN carries its own.
#pragma once

namespace CLI {
class App;
}

namespace accel::cli {

void add_convert_command(CLI::App& app);

}  // namespace accel::cli
