// Fashion-MNIST (and MNIST, same file names) from IDX files on disk, as
// keras.datasets.fashion_mnist.load_data() returns it.
#pragma once

#include <accel/dtype.hpp>
#include <accel/tensor.hpp>

#include <string>

namespace accel::data {

struct FashionMnist {
  Tensor train_images;  // [60000, 28, 28]
  Tensor train_labels;  // [60000]
  Tensor test_images;   // [10000, 28, 28]
  Tensor test_labels;   // [10000]
};

struct FashionMnistOptions {
  // uint8 as stored, or float32 scaled to [0, 1] (the Keras tutorial's x / 255).
  DType image_dtype = DType::kFloat32;
  // int32 or int64 (or uint8).
  DType label_dtype = DType::kInt32;
};

// $ACCEL_FASHION_MNIST_DIR when set, else /usr/share/datasets/fashion-mnist
// (Debian's dataset-fashion-mnist package).
std::string default_fashion_mnist_dir();

// Reads {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] from `dir` (the
// default directory when empty). Throws NotFoundError naming the directory and
// the files looked for when they are missing, and DataError naming the file
// and byte for anything read_idx rejects, images that are not 28x28, a label
// outside [0, 10), an empty file, or a labels file whose count differs from
// its images file's.
FashionMnist load_fashion_mnist(const std::string& dir = {}, const FashionMnistOptions& options = {});

}  // namespace accel::data
