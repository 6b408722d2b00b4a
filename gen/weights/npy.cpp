// NumPy .npy / .npz I/O: the .npy format here, the ZIP container under .npz in zip.cpp. Every read
// is bounds-checked against the input bytes, so truncated or corrupt files end in an InputError,
// never in an out-of-bounds read or a huge allocation.
#include "weights/npy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string_view>

#include "core/atomic_file.hpp"
#include "core/input_error.hpp"
#include "core/limits.hpp"
#include "weights/byte_io.hpp"
#include "weights/zip.hpp"

namespace capsgen {
namespace {

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

using weights_detail::excerpt;
using weights_detail::load_le;
using weights_detail::put_le;
using weights_detail::Where;

std::uint64_t load_be(std::string_view b, std::size_t off, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<std::uint8_t>(b[off + i]);
  return v;
}

// a * b, or nullopt-like false on overflow.
bool checked_mul(std::size_t a, std::size_t b, std::size_t* out) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a) return false;
  *out = a * b;
  return true;
}

std::string read_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    throw InputError(path, 0, 0, "", "cannot open file: no such file");
  }
  if (std::filesystem::is_directory(status)) {
    throw InputError(path, 0, 0, "", "cannot open file: it is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "", std::string("cannot open file: ") + std::strerror(errno));
  std::string bytes;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  // Array files hold at most the array-data limit (plus headers): no device or huge file is read whole.
  const std::uint64_t cap = input_limits().max_array_bytes + (std::uint64_t(1) << 20);
  if (size < 0 || std::uint64_t(size) > cap)
    throw InputError(path, 0, 0, "",
                     size < 0 ? std::string("not a regular file of known size")
                              : fmt::format("{} bytes is more than the array limit of {} MiB (raise it with --max-array-mib)",
                                            size, input_limits().max_array_bytes >> 20));
  if (size > 0) {
    in.seekg(0, std::ios::beg);
    bytes.resize(static_cast<std::size_t>(size));
    in.read(bytes.data(), size);
    if (in.gcount() != size) throw InputError(path, 0, 0, "", "read error");
  }
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// .npy header
// ---------------------------------------------------------------------------------------------

constexpr std::string_view kNpyMagic("\x93NUMPY", 6);

enum class Kind { kFloat, kInt, kUint, kBool };

struct Dtype {
  Kind kind = Kind::kFloat;
  int size = 4;
  bool big_endian = false;
  std::string name;  // NumPy's name, e.g. "float32", for messages
};

struct NpyHeader {
  Dtype dtype;
  bool fortran_order = false;
  Shape shape;
};

// Parses the dtype descriptor string, e.g. "<f4", "|u1", ">i8".
Dtype parse_descr(const std::string& descr, const Where& where) {
  const std::string supported =
      "supported: float16/32/64, int8/16/32/64, uint8/16/32/64, bool; byte order '<', '>' or '|'";
  auto unsupported = [&]() {
    where.fail("header.descr", fmt::format("unsupported dtype '{}' ({})", excerpt(descr), supported));
  };
  if (descr.size() < 3 || descr.size() > 3 + 1) unsupported();
  const char order = descr[0];
  const char code = descr[1];
  const std::string digits = descr.substr(2);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    unsupported();
  }
  const int size = std::stoi(digits);
  Dtype d;
  d.size = size;
  switch (code) {
    case 'f':
      d.kind = Kind::kFloat;
      if (size != 2 && size != 4 && size != 8) unsupported();
      d.name = fmt::format("float{}", size * 8);
      break;
    case 'i':
      d.kind = Kind::kInt;
      if (size != 1 && size != 2 && size != 4 && size != 8) unsupported();
      d.name = fmt::format("int{}", size * 8);
      break;
    case 'u':
      d.kind = Kind::kUint;
      if (size != 1 && size != 2 && size != 4 && size != 8) unsupported();
      d.name = fmt::format("uint{}", size * 8);
      break;
    case 'b':
      d.kind = Kind::kBool;
      if (size != 1) unsupported();
      d.name = "bool";
      break;
    default:
      unsupported();
  }
  // '|' means "byte order not applicable", which NumPy only writes for one-byte types.
  if (order == '<' || (order == '|' && size == 1)) {
    d.big_endian = false;
  } else if (order == '>') {
    d.big_endian = size > 1;
  } else {
    unsupported();
  }
  return d;
}

// Recursive-descent parser for the header: a Python dict literal with exactly the keys 'descr',
// 'fortran_order' and 'shape', in any order, with an optional trailing comma.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const Where& where) : text_(text), where_(where) {}

  NpyHeader parse() {
    NpyHeader h;
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    skip_ws();
    expect('{', "the header dictionary to start");
    skip_ws();
    while (peek() != '}') {
      const std::size_t key_pos = pos_;
      const std::string key = parse_string("header", "a key");
      skip_ws();
      expect(':', fmt::format("':' after key '{}'", excerpt(key)));
      skip_ws();
      bool* seen = nullptr;
      if (key == "descr") {
        seen = &seen_descr;
        if (peek() == '[') where_.fail("header.descr", "structured dtypes are not supported");
        h.dtype = parse_descr(parse_string("header.descr", "a dtype string"), where_);
      } else if (key == "fortran_order") {
        seen = &seen_fortran;
        h.fortran_order = parse_bool();
      } else if (key == "shape") {
        seen = &seen_shape;
        h.shape = parse_shape();
      } else {
        fail_at("header", fmt::format("unexpected key '{}'", excerpt(key)), key_pos);
      }
      if (*seen) fail_at("header", fmt::format("duplicate key '{}'", key), key_pos);
      *seen = true;
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        skip_ws();
      } else if (peek() != '}') {
        fail_at("header", "expected ',' or '}' after a value", pos_);
      }
    }
    ++pos_;  // '}'
    skip_ws();
    if (pos_ != text_.size()) {
      fail_at("header", fmt::format("unexpected text after the dictionary: '{}'", excerpt(text_.substr(pos_), 20)),
              pos_);
    }
    if (!seen_descr) where_.fail("header", "missing key 'descr'");
    if (!seen_fortran) where_.fail("header", "missing key 'fortran_order'");
    if (!seen_shape) where_.fail("header", "missing key 'shape'");
    return h;
  }

 private:
  // Returns '\0' at the end; a NUL inside the header is invalid anyway.
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  void skip_ws() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  [[noreturn]] void fail_at(const std::string& field, const std::string& message, std::size_t pos) const {
    where_.fail(field, fmt::format("{} (at header offset {})", message, pos));
  }

  void expect(char c, const std::string& what) {
    if (peek() != c) {
      fail_at("header",
              fmt::format("expected {} but found '{}'", what,
                          pos_ < text_.size() ? excerpt(text_.substr(pos_, 10)) : "end of header"),
              pos_);
    }
    ++pos_;
  }

  std::string parse_string(const std::string& field, const std::string& what) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail_at(field, fmt::format("expected {} (a quoted string)", what), pos_);
    const std::size_t start = ++pos_;
    const std::size_t end = text_.find(quote, start);
    if (end == std::string_view::npos) fail_at(field, "unterminated string", start - 1);
    pos_ = end + 1;
    return std::string(text_.substr(start, end - start));
  }

  bool parse_bool() {
    for (const auto& [word, value] :
         {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    fail_at("header.fortran_order", "expected True or False", pos_);
  }

  // A Python tuple of non-negative ints: "()", "(3,)", "(2, 3)", "(2, 3,)". Python 2 era files
  // may carry long suffixes ("3L"), which NumPy still accepts.
  Shape parse_shape() {
    const std::size_t start = pos_;
    auto bad = [&](const std::string& why) {
      std::size_t end = text_.find(')', start);
      end = end == std::string_view::npos ? text_.size() : end + 1;
      where_.fail("header.shape",
                  fmt::format("bad shape text '{}': {}", excerpt(text_.substr(start, end - start)), why));
    };
    if (peek() != '(') bad("expected a tuple such as (2, 3)");
    ++pos_;
    Shape shape;
    bool trailing_comma = false;
    skip_ws();
    while (peek() != ')') {
      if (peek() < '0' || peek() > '9') bad("dimensions must be non-negative integers");
      std::size_t value = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (!checked_mul(value, 10, &value) || value > std::numeric_limits<std::size_t>::max() - (peek() - '0')) {
          bad("dimension too large");
        }
        value += static_cast<std::size_t>(peek() - '0');
        ++pos_;
      }
      if (peek() == 'L') ++pos_;
      shape.push_back(value);
      skip_ws();
      trailing_comma = false;
      if (peek() == ',') {
        trailing_comma = true;
        ++pos_;
        skip_ws();
      } else if (peek() != ')') {
        bad("expected ',' or ')'");
      }
    }
    ++pos_;
    // "(3)" is the int 3 in Python, not a tuple; NumPy rejects it too.
    if (shape.size() == 1 && !trailing_comma) bad("a 1-D shape needs a trailing comma, e.g. (3,)");
    return shape;
  }

  std::string_view text_;
  const Where& where_;
  std::size_t pos_ = 0;
};

// IEEE half to float (exact: every half is a float).
float half_to_float(std::uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    v = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    v = std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  }
  return (h & 0x8000) ? -v : v;
}

// Multi-dimensional position of the flat-th element in file order, for messages.
std::string element_position(const Shape& shape, std::size_t flat, bool fortran) {
  if (!fortran) return index_str(shape, flat);
  Shape pos(shape.size());
  for (std::size_t k = 0; k < shape.size(); ++k) {  // Fortran order: first index varies fastest
    pos[k] = shape[k] ? flat % shape[k] : 0;
    flat = shape[k] ? flat / shape[k] : 0;
  }
  return shape_str(pos);
}

// Decodes count elements of dtype d starting at data[0]; the caller has checked the length.
std::vector<float> decode_elements(std::string_view data, std::size_t count, const Dtype& d, const Shape& shape,
                                   bool fortran, const Where& where) {
  std::vector<float> out(count);
  if (d.kind == Kind::kFloat && d.size == 4 && !d.big_endian && std::endian::native == std::endian::little) {
    if (count) std::memcpy(out.data(), data.data(), count * 4);  // the common case, fast path
    return out;
  }
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t off = i * static_cast<std::size_t>(d.size);
    const std::uint64_t raw = d.big_endian ? load_be(data, off, d.size) : load_le(data, off, d.size);
    float v = 0.0f;
    switch (d.kind) {
      case Kind::kFloat:
        if (d.size == 2) {
          v = half_to_float(static_cast<std::uint16_t>(raw));
        } else if (d.size == 4) {
          v = std::bit_cast<float>(static_cast<std::uint32_t>(raw));
        } else {
          const double x = std::bit_cast<double>(raw);
          // Silently turning a huge weight into inf would corrupt the model: reject it.
          if (std::isfinite(x) && std::fabs(x) > static_cast<double>(std::numeric_limits<float>::max())) {
            where.fail("data",
                       fmt::format("element {} = {} does not fit in float32", element_position(shape, i, fortran), x));
          }
          v = static_cast<float>(x);
        }
        break;
      case Kind::kInt: {
        const int shift = 64 - 8 * d.size;
        // Sign-extend via an arithmetic shift of the value moved to the top bits.
        const auto x = static_cast<std::int64_t>(raw << shift) >> shift;
        v = static_cast<float>(x);
        break;
      }
      case Kind::kUint:
        v = static_cast<float>(raw);
        break;
      case Kind::kBool:
        v = raw != 0 ? 1.0f : 0.0f;
        break;
    }
    out[i] = v;
  }
  return out;
}

// Column-major (Fortran) data to row-major.
std::vector<float> fortran_to_c(const std::vector<float>& f, const Shape& shape) {
  if (shape.size() < 2) return f;
  const std::size_t rank = shape.size();
  Shape c_stride(rank, 1);
  for (std::size_t k = rank - 1; k-- > 0;) c_stride[k] = c_stride[k + 1] * shape[k + 1];
  std::vector<float> c(f.size());
  Shape idx(rank, 0);
  for (std::size_t i = 0; i < f.size(); ++i) {
    std::size_t dst = 0;
    for (std::size_t k = 0; k < rank; ++k) dst += idx[k] * c_stride[k];
    c[dst] = f[i];
    // Fortran order: the first index varies fastest.
    for (std::size_t k = 0; k < rank; ++k) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return c;
}

FloatTensor parse_npy_at(std::string_view bytes, const Where& where) {
  if (bytes.size() < kNpyMagic.size() || bytes.substr(0, kNpyMagic.size()) != kNpyMagic) {
    where.fail("header", "not a .npy file (bad magic)");
  }
  if (bytes.size() < 8) where.fail("header", "truncated header (no version)");
  const int major = static_cast<std::uint8_t>(bytes[6]);
  const int minor = static_cast<std::uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    where.fail("header", fmt::format("unsupported .npy format version {}.{} (supported: 1.0, 2.0, 3.0)", major, minor));
  }
  // 1.0 has a 2-byte header length, 2.0 and 3.0 a 4-byte one (3.0 only changes the encoding to
  // UTF-8, which needs no special handling for the ASCII keys and values we accept).
  const int len_bytes = major == 1 ? 2 : 4;
  const std::size_t prefix = 8 + static_cast<std::size_t>(len_bytes);
  if (bytes.size() < prefix) where.fail("header", "truncated header (no header length)");
  const std::size_t header_len = load_le(bytes, 8, len_bytes);
  if (header_len > bytes.size() - prefix) {
    where.fail("header", fmt::format("truncated header: header length is {} bytes, file has {} after the prefix",
                                     header_len, bytes.size() - prefix));
  }
  const NpyHeader h = HeaderParser(bytes.substr(prefix, header_len), where).parse();

  std::size_t count = 1;
  for (std::size_t dim : h.shape) {
    if (!checked_mul(count, dim, &count)) where.fail("header.shape", "shape " + shape_str(h.shape) + " is too large");
  }
  std::size_t data_bytes = 0;
  if (!checked_mul(count, static_cast<std::size_t>(h.dtype.size), &data_bytes)) {
    where.fail("header.shape", "shape " + shape_str(h.shape) + " is too large");
  }
  const std::size_t data_offset = prefix + header_len;
  const std::size_t available = bytes.size() - data_offset;
  if (data_bytes > available) {
    where.fail("data", fmt::format("truncated: header says {} bytes of {} (shape {}), file has {}", data_bytes,
                                   h.dtype.name, shape_str(h.shape), available));
  }
  if (data_bytes < available) {
    where.fail("data", fmt::format("{} unexpected bytes after the {} bytes of {} data", available - data_bytes,
                                   data_bytes, h.dtype.name));
  }
  FloatTensor t;
  t.shape = h.shape;
  t.data = decode_elements(bytes.substr(data_offset), count, h.dtype, h.shape, h.fortran_order, where);
  if (h.fortran_order) t.data = fortran_to_c(t.data, t.shape);
  return t;
}

// ---------------------------------------------------------------------------------------------
// Writers
// ---------------------------------------------------------------------------------------------

// NumPy's repr of a shape tuple: (), (3,), (2, 3).
std::string shape_repr(const Shape& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  if (s.size() == 1) out += ",";
  return out + ")";
}

}  // namespace

FloatTensor parse_npy(const std::string& bytes, const std::string& file_name) {
  return parse_npy_at(bytes, Where{file_name, ""});
}

FloatTensor read_npy(const std::string& path) { return parse_npy(read_file(path), path); }

std::map<std::string, FloatTensor> parse_npz(const std::string& bytes, const std::string& file_name) {
  const ZipReader zip(bytes, file_name);
  // Decompressed bytes are capped before anything is inflated: a small archive must not expand
  // into gigabytes (extract() makes each member exactly its recorded size or fails).
  const std::uint64_t cap = input_limits().max_array_bytes;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < zip.size(); ++i) {
    total += std::min<std::uint64_t>(zip.uncompressed_size(i), cap + 1);
    if (total > cap)
      Where{file_name, zip.name(i).empty() ? "<unnamed member>" : excerpt(zip.name(i), 200)}.fail(
          "", fmt::format("the archive's members inflate to more than {} MiB (the limit; raise it with --max-array-mib)",
                          cap >> 20));
  }
  std::map<std::string, FloatTensor> arrays;
  for (std::size_t i = 0; i < zip.size(); ++i) {
    // numpy.load strips ".npy" from member names to form the keys; do the same.
    std::string key = zip.name(i);
    if (key.size() >= 4 && key.compare(key.size() - 4, 4, ".npy") == 0) key.resize(key.size() - 4);
    // Names may hold arbitrary bytes; messages get a printable form.
    const Where where{file_name, key.empty() ? "<unnamed member>" : excerpt(key, 200)};
    if (arrays.count(key)) where.fail("", "duplicate member in the archive");
    arrays[key] = parse_npy_at(zip.extract(i, where.member), where);
  }
  return arrays;
}

std::map<std::string, FloatTensor> read_npz(const std::string& path) { return parse_npz(read_file(path), path); }

std::string serialize_npy(const FloatTensor& t) {
  if (t.data.size() != shape_size(t.shape)) {
    throw std::invalid_argument(fmt::format("serialize_npy: shape {} needs {} elements, tensor has {}",
                                            shape_str(t.shape), shape_size(t.shape), t.data.size()));
  }
  // Same bytes as numpy.save: sorted keys, spare spaces so the first axis can grow in place,
  // then space padding and '\n' so the data starts at a multiple of 64.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_repr(t.shape) + ", }";
  if (!t.shape.empty()) {
    const std::size_t digits = std::to_string(t.shape[0]).size();
    if (digits < 21) header.append(21 - digits, ' ');
  }
  const std::size_t hlen = header.size() + 1;
  int version = 1;
  std::size_t prefix = 10;
  std::size_t pad = 64 - (prefix + hlen) % 64;
  if (hlen + pad > 0xffff) {  // only for absurd ranks; NumPy switches to 2.0 the same way
    version = 2;
    prefix = 12;
    pad = 64 - (prefix + hlen) % 64;
  }
  std::string out;
  out.reserve(prefix + hlen + pad + 4 * t.data.size());
  out += kNpyMagic;
  out.push_back(static_cast<char>(version));
  out.push_back(0);
  put_le(out, hlen + pad, version == 1 ? 2 : 4);
  out += header;
  out.append(pad, ' ');
  out.push_back('\n');
  for (float v : t.data) put_le(out, std::bit_cast<std::uint32_t>(v), 4);
  return out;
}

void write_npy(const std::string& path, const FloatTensor& t) { write_file_atomic(path, serialize_npy(t)); }

std::string serialize_npz(const std::map<std::string, FloatTensor>& arrays) {
  ZipWriter zip;
  for (const auto& [key, tensor] : arrays) {
    if (key.empty()) throw std::invalid_argument("serialize_npz: empty array name");
    const std::string payload = serialize_npy(tensor);
    try {
      zip.add(key + ".npy", payload);
    } catch (const ZipLimitError&) {
      throw std::invalid_argument("serialize_npz: '" + key + "' does not fit in a non-zip64 archive (4 GiB limit)");
    }
  }
  try {
    return zip.finish();
  } catch (const ZipLimitError&) {
    throw std::invalid_argument("serialize_npz: archive does not fit in a non-zip64 archive (4 GiB limit)");
  }
}

void write_npz(const std::string& path, const std::map<std::string, FloatTensor>& arrays) {
  write_file_atomic(path, serialize_npz(arrays));
}

}  // namespace capsgen
