// check_plugin_file: the ELF header, the program header table and the load
// segments of a plugin file, read with plain file I/O (nothing is mapped).
#include "runtime/plugin_file_check.hpp"

#include <elf.h>
#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <vector>

namespace accel::detail {
namespace {

#if defined(__x86_64__)
constexpr unsigned kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kHostMachine = EM_AARCH64;
#else
#error "plugin_file_check: add this machine's ELF e_machine"
#endif

// A program header table larger than this is not a library's.
constexpr unsigned kMaxProgramHeaders = 256;

}  // namespace

std::string elf_machine_name(unsigned machine) {
  switch (machine) {
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "aarch64";
    case EM_386: return "i386";
    case EM_ARM: return "arm";
    case EM_RISCV: return "riscv";
    case EM_PPC64: return "ppc64";
    case EM_S390: return "s390";
    default: return fmt::format("machine {}", machine);
  }
}

namespace {

// Opens `path` and reads and checks its ELF header and program headers (see
// check_plugin_file); on success `segments` holds the program headers and
// `file` stays open for further reads. Returns why the file is refused, or "".
std::string read_checked_elf(const std::filesystem::path& path, std::ifstream& file, std::vector<Elf64_Phdr>& segments) {
  file.open(path, std::ios::binary);
  if (!file) return "cannot read file (permission denied or missing)";
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (error) return "cannot read the file's size: " + error.message();

  Elf64_Ehdr header{};
  file.read(reinterpret_cast<char*>(&header), sizeof(header));
  const auto got = static_cast<size_t>(file.gcount());
  if (got < 4 || header.e_ident[EI_MAG0] != ELFMAG0 || header.e_ident[EI_MAG1] != ELFMAG1 ||
      header.e_ident[EI_MAG2] != ELFMAG2 || header.e_ident[EI_MAG3] != ELFMAG3) {
    return "not a shared library (no ELF header)";
  }
  if (got < sizeof(header)) return fmt::format("truncated ELF file ({} bytes, shorter than its header)", size);
  if (header.e_ident[EI_CLASS] != ELFCLASS64) return "a 32-bit ELF file; this host loads 64-bit plugins";
  if (header.e_ident[EI_DATA] != ELFDATA2LSB) return "a big-endian ELF file; this host is little-endian";
  if (header.e_machine != kHostMachine) {
    return fmt::format("built for {}, but this host is {}", elf_machine_name(header.e_machine),
                       elf_machine_name(kHostMachine));
  }
  if (header.e_type != ET_DYN) return "an ELF file that is not a shared library (e_type is not ET_DYN)";
  if (header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum == 0 || header.e_phnum > kMaxProgramHeaders) {
    return fmt::format("a malformed ELF file ({} program headers of {} bytes)", header.e_phnum, header.e_phentsize);
  }
  const uint64_t table_end = header.e_phoff + uint64_t{header.e_phnum} * sizeof(Elf64_Phdr);
  if (header.e_phoff > size || table_end > size) {
    return fmt::format("truncated ELF file ({} bytes; its program headers end at byte {})", size, table_end);
  }
  segments.resize(header.e_phnum);
  file.seekg(static_cast<std::streamoff>(header.e_phoff));
  file.read(reinterpret_cast<char*>(segments.data()), static_cast<std::streamsize>(segments.size() * sizeof(Elf64_Phdr)));
  if (static_cast<size_t>(file.gcount()) != segments.size() * sizeof(Elf64_Phdr)) return "cannot read the program headers";
  bool loads_anything = false;
  for (const Elf64_Phdr& segment : segments) {
    if (segment.p_type != PT_LOAD && segment.p_type != PT_DYNAMIC) continue;
    loads_anything |= segment.p_type == PT_LOAD;
    const uint64_t end = segment.p_offset + segment.p_filesz;
    if (end < segment.p_offset || end > size) {
      return fmt::format("truncated ELF file ({} bytes, but a segment it maps ends at byte {}): a copy cut short?", size,
                         end);
    }
  }
  if (!loads_anything) return "an ELF file with nothing to load (no PT_LOAD segment)";
  // The section headers come last in the file: not mapped, but where a copy
  // cut short shows first.
  const uint64_t sections_end = header.e_shoff + uint64_t{header.e_shnum} * header.e_shentsize;
  if (header.e_shoff != 0 && (header.e_shoff > size || sections_end > size)) {
    return fmt::format("truncated ELF file ({} bytes, but its section headers end at byte {}): a copy cut short?", size,
                       sections_end);
  }
  return {};
}

}  // namespace

std::string check_plugin_file(const std::filesystem::path& path) {
  std::ifstream file;
  std::vector<Elf64_Phdr> segments;
  return read_checked_elf(path, file, segments);
}

std::string elf_build_id(const std::filesystem::path& path) {
  std::ifstream file;
  std::vector<Elf64_Phdr> segments;
  if (!read_checked_elf(path, file, segments).empty()) return {};
  constexpr uint64_t kMaxNoteBytes = 1 << 16;
  for (const Elf64_Phdr& segment : segments) {
    if (segment.p_type != PT_NOTE || segment.p_filesz > kMaxNoteBytes) continue;
    std::string notes(segment.p_filesz, '\0');
    file.seekg(static_cast<std::streamoff>(segment.p_offset));
    file.read(notes.data(), static_cast<std::streamsize>(notes.size()));
    // Each note: namesz, descsz, type, then the name and the descriptor, each padded to 4 bytes.
    size_t at = 0;
    while (at + sizeof(Elf64_Nhdr) <= notes.size()) {
      Elf64_Nhdr note{};
      std::memcpy(&note, notes.data() + at, sizeof(note));
      const size_t name_at = at + sizeof(note);
      const size_t descriptor_at = name_at + ((note.n_namesz + 3u) & ~size_t{3});
      const size_t next = descriptor_at + ((note.n_descsz + 3u) & ~size_t{3});
      if (next > notes.size() || next <= at) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && notes.compare(name_at, 4, std::string("GNU\0", 4)) == 0) {
        std::string hex;
        for (size_t byte = 0; byte < note.n_descsz; ++byte) {
          hex += fmt::format("{:02x}", static_cast<unsigned char>(notes[descriptor_at + byte]));
        }
        return hex;
      }
      at = next;
    }
  }
  return {};
}

}  // namespace accel::detail
