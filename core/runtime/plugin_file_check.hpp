// Checks a plugin file before the dynamic loader maps it. dlopen trusts the
// file: a truncated library (a copy cut short, a full disk) is mapped past its
// end and the first touch of a missing page is SIGBUS inside dlopen; a library
// for another machine gets a vague message. So the ELF header and program
// headers are read here first: 64-bit, this machine, a shared object, and
// every segment that will be mapped lies inside the file.
#pragma once

#include <filesystem>
#include <string>

namespace accel::detail {

// Empty when the file can be handed to dlopen; otherwise why not.
std::string check_plugin_file(const std::filesystem::path& path);

// The file's GNU build id (hex), or "" when it has none or is not a valid ELF
// file: with the size and modification time it names one build of a plugin.
std::string elf_build_id(const std::filesystem::path& path);

// The architecture a machine number stands for ("x86-64", "aarch64", ...).
std::string elf_machine_name(unsigned machine);

}  // namespace accel::detail
