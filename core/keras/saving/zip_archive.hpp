// Internal: whole-archive zip reads and writes over libzip, for .keras files.
// Reading checks what a damaged or hostile archive could lie about (sizes,
// CRCs, deflate bombs) and names the file and member in every error.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace accel::keras::saving {

// Every member's bytes by name. A missing file is NotFoundError; anything
// that is not a sound zip is InvalidArgumentError.
std::map<std::string, std::string> read_zip_archive(const std::string& path);

// The bytes of a zip holding `members` in this order, stored uncompressed
// (as Keras 3 writes .keras files).
std::string make_zip_archive(const std::vector<std::pair<std::string, std::string>>& members,
                             const std::string& source);

}  // namespace accel::keras::saving
