// Where a callback writes when training runs on several workers, as
// TensorFlow's distributed_file_utils: the chief writes to the path it was
// given; every other worker writes to a temporary folder beside it,
// "<folder>/workertemp_<task index>/<file>", and removes that folder when
// done, so that workers never overwrite the chief's files. With one worker
// (or no strategy) the path is unchanged.
#pragma once

#include <string>

namespace accel::keras {
class Model;
}

namespace accel::keras::detail {

// True when this process writes the real files (the chief, or no cluster).
bool writes_real_files(const Model& model);
// The file this worker writes in place of `filepath`.
std::string worker_write_filepath(const std::string& filepath, const Model& model);
// The folder this worker writes in place of `dirpath`.
std::string worker_write_dirpath(const std::string& dirpath, const Model& model);
// Removes a non-chief worker's temporary folder for `dirpath`; nothing for the chief.
void remove_worker_temp_dirpath(const std::string& dirpath, const Model& model);

}  // namespace accel::keras::detail
