// load_fashion_mnist: the four IDX files of Fashion-MNIST (or MNIST) from a
// directory, each checked where it is read: 28x28 images, labels in [0, 10),
// no empty split, as many labels as images.
#include <accel/data/data_error.hpp>
#include <accel/data/fashion_mnist.hpp>
#include <accel/error.hpp>

#include "idx_format.hpp"
#include "idx_tensor.hpp"

#include <cstdlib>
#include <filesystem>

namespace accel::data {
namespace {

constexpr const char* kDebianDatasetDir = "/usr/share/datasets/fashion-mnist";
constexpr IdxImageSize kImageSize{28, 28};
constexpr int kNumClasses = 10;

// "<dir>/<stem>.gz" or "<dir>/<stem>", whichever exists.
std::string find_idx_file(const std::string& dir, const std::string& stem) {
  for (const std::string& candidate : {dir + "/" + stem + ".gz", dir + "/" + stem}) {
    if (std::filesystem::exists(candidate)) return candidate;
  }
  throw NotFoundError("load_fashion_mnist: neither " + stem + ".gz nor " + stem + " is in '" + dir +
                      "' (set ACCEL_FASHION_MNIST_DIR, or install Debian's dataset-fashion-mnist package)");
}

// One split's images and labels, checked against each other.
void load_split(const std::string& dir, const std::string& prefix, const FashionMnistOptions& options,
                Tensor& images_out, Tensor& labels_out) {
  const detail::IdxContents images = detail::read_idx_file(find_idx_file(dir, prefix + "-images-idx3-ubyte"));
  detail::check_idx_images(images, kImageSize);
  const detail::IdxContents labels = detail::read_idx_file(find_idx_file(dir, prefix + "-labels-idx1-ubyte"));
  detail::check_idx_labels(labels, kNumClasses);
  if (images.dims[0] != labels.dims[0]) {
    throw DataError(labels.name, labels.location(detail::idx_dim_offset(0)),
                    "holds " + std::to_string(labels.dims[0]) + " labels but '" + images.name + "' holds " +
                        std::to_string(images.dims[0]) + " images; every image needs one label");
  }
  if (options.label_dtype == DType::kFloat32) {
    throw InvalidArgumentError("load_fashion_mnist: labels are integers; use uint8, int32 or int64");
  }
  images_out = detail::idx_to_tensor(images, options.image_dtype, detail::kImagesInUnitInterval);
  labels_out = detail::idx_to_tensor(labels, options.label_dtype, {});
}

}  // namespace

std::string default_fashion_mnist_dir() {
  if (const char* dir = std::getenv("ACCEL_FASHION_MNIST_DIR"); dir != nullptr && *dir != '\0') return dir;
  return kDebianDatasetDir;
}

FashionMnist load_fashion_mnist(const std::string& dir, const FashionMnistOptions& options) {
  const std::string root = dir.empty() ? default_fashion_mnist_dir() : dir;
  FashionMnist data;
  load_split(root, "train", options, data.train_images, data.train_labels);
  load_split(root, "t10k", options, data.test_images, data.test_labels);
  return data;
}

}  // namespace accel::data
