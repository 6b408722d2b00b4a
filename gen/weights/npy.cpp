// NumPy .npy / .npz I/O. Every read is bounds-checked against the input bytes, so truncated or
// corrupt files end in an InputError, never in an out-of-bounds read or a huge allocation.
#include "weights/npy.hpp"

#include <fmt/format.h>
#include <zlib.h>

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

namespace capsgen {
namespace {

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

// Where a problem is: the file and, for .npz, the member key. A .npy field ("header.shape",
// "data") becomes the InputError field of a plain .npy and a message prefix inside a .npz, so the
// message always names the file, the member and the field.
struct Where {
  std::string file;
  std::string member;

  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    if (member.empty()) throw InputError(file, 0, 0, field, message);
    throw InputError(file, 0, 0, member, field.empty() ? message : field + ": " + message);
  }
};

// Little-endian unsigned load of n <= 8 bytes; the caller has checked the bounds.
std::uint64_t load_le(std::string_view b, std::size_t off, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(b[off + i]);
  return v;
}

std::uint64_t load_be(std::string_view b, std::size_t off, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<std::uint8_t>(b[off + i]);
  return v;
}

void put_le(std::string& out, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// a * b, or nullopt-like false on overflow.
bool checked_mul(std::size_t a, std::size_t b, std::size_t* out) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a) return false;
  *out = a * b;
  return true;
}

// Printable excerpt of header text for messages (headers may contain binary garbage).
std::string excerpt(std::string_view s, std::size_t max_len = 60) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < max_len; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f) ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  }
  if (s.size() > max_len) out += "...";
  return out;
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
// .npz (ZIP) reading
// ---------------------------------------------------------------------------------------------

constexpr std::uint32_t kLocalSig = 0x04034b50;
constexpr std::uint32_t kCentralSig = 0x02014b50;
constexpr std::uint32_t kEocdSig = 0x06054b50;
constexpr std::uint32_t kZip64EocdSig = 0x06064b50;
constexpr std::uint32_t kZip64LocatorSig = 0x07064b50;
constexpr std::size_t kEocdSize = 22;
constexpr std::size_t kZip64EocdSize = 56;
constexpr std::size_t kZip64LocatorSize = 20;
constexpr std::size_t kCentralSize = 46;
constexpr std::size_t kLocalSize = 30;
constexpr std::uint32_t kU32Max = 0xffffffff;
// Deflate cannot expand data by more than ~1032:1; larger claims are corrupt and would otherwise
// make us allocate gigabytes for a tiny file.
constexpr std::uint64_t kMaxDeflateRatio = 1032;

struct Member {
  std::string name;
  std::uint16_t flags = 0;
  std::uint16_t method = 0;
  std::uint32_t crc = 0;
  std::uint64_t compressed_size = 0;
  std::uint64_t size = 0;
  std::uint64_t local_offset = 0;
};

struct Directory {
  std::uint64_t entries = 0;
  std::uint64_t size = 0;
  std::uint64_t offset = 0;
};

bool fits(std::string_view b, std::uint64_t off, std::uint64_t len) { return off <= b.size() && len <= b.size() - off; }

// Finds the End Of Central Directory record (and its zip64 variant when present).
Directory find_directory(std::string_view b, const Where& where) {
  if (b.size() < kEocdSize) where.fail("", "not a zip archive (no end-of-central-directory record)");
  // The EOCD ends the file, followed only by a comment of at most 65535 bytes. Prefer a record
  // whose comment length matches the file end exactly; otherwise take the last plausible one.
  const std::size_t lowest = b.size() - kEocdSize > 0xffff ? b.size() - kEocdSize - 0xffff : 0;
  std::size_t eocd = std::string_view::npos;
  for (std::size_t pos = b.size() - kEocdSize + 1; pos-- > lowest;) {
    if (load_le(b, pos, 4) != kEocdSig) continue;
    const std::size_t comment = load_le(b, pos + 20, 2);
    if (pos + kEocdSize + comment == b.size()) {
      eocd = pos;
      break;
    }
    if (eocd == std::string_view::npos && pos + kEocdSize + comment <= b.size()) eocd = pos;
  }
  if (eocd == std::string_view::npos) where.fail("", "not a zip archive (no end-of-central-directory record)");

  const std::uint64_t disk = load_le(b, eocd + 4, 2);
  const std::uint64_t cd_disk = load_le(b, eocd + 6, 2);
  const std::uint64_t disk_entries = load_le(b, eocd + 8, 2);
  Directory d;
  d.entries = load_le(b, eocd + 10, 2);
  d.size = load_le(b, eocd + 12, 4);
  d.offset = load_le(b, eocd + 16, 4);

  const bool has_locator = eocd >= kZip64LocatorSize && load_le(b, eocd - kZip64LocatorSize, 4) == kZip64LocatorSig;
  if (has_locator) {
    const std::size_t loc = eocd - kZip64LocatorSize;
    const std::uint64_t z_off = load_le(b, loc + 8, 8);
    if (z_off > loc || loc - z_off < kZip64EocdSize || load_le(b, z_off, 4) != kZip64EocdSig) {
      where.fail("zip64 end-of-central-directory", "record missing or corrupt");
    }
    if (load_le(b, z_off + 16, 4) != 0 || load_le(b, z_off + 20, 4) != 0) {
      where.fail("zip64 end-of-central-directory", "multi-disk archives are not supported");
    }
    if (load_le(b, z_off + 24, 8) != load_le(b, z_off + 32, 8)) {
      where.fail("zip64 end-of-central-directory", "multi-disk archives are not supported");
    }
    d.entries = load_le(b, z_off + 32, 8);
    d.size = load_le(b, z_off + 40, 8);
    d.offset = load_le(b, z_off + 48, 8);
  } else {
    // (An entry count of 0xffff is legal without zip64: it is exactly 65535 entries.)
    if (d.size == kU32Max || d.offset == kU32Max) {
      where.fail("end-of-central-directory", "zip64 values without a zip64 locator");
    }
    if (disk != 0 || cd_disk != 0 || disk_entries != d.entries) {
      where.fail("end-of-central-directory", "multi-disk archives are not supported");
    }
  }
  if (!fits(b, d.offset, d.size)) {
    where.fail("central directory",
               fmt::format("offset {} + size {} is past the end of the file ({} bytes)", d.offset, d.size, b.size()));
  }
  // Each entry takes at least 46 bytes, which bounds a corrupt entry count.
  if (d.entries > d.size / kCentralSize) {
    where.fail("central directory", fmt::format("{} entries cannot fit in {} bytes", d.entries, d.size));
  }
  return d;
}

// Replaces saturated 32-bit fields by the values of the zip64 extra field (id 0x0001), which
// lists only the saturated ones, in this fixed order.
void apply_zip64_extra(std::string_view extra, Member* m, bool offset_saturated, const Where& where) {
  const bool need_size = m->size == kU32Max;
  const bool need_csize = m->compressed_size == kU32Max;
  if (!need_size && !need_csize && !offset_saturated) return;
  std::size_t pos = 0;
  while (pos + 4 <= extra.size()) {
    const std::uint64_t id = load_le(extra, pos, 2);
    const std::size_t len = load_le(extra, pos + 2, 2);
    pos += 4;
    if (len > extra.size() - pos) break;
    if (id == 0x0001) {
      std::size_t f = pos;
      const std::size_t end = pos + len;
      auto take = [&](std::uint64_t* field) {
        if (end - f < 8) where.fail("zip64 extra field", "too short");
        *field = load_le(extra, f, 8);
        f += 8;
      };
      if (need_size) take(&m->size);
      if (need_csize) take(&m->compressed_size);
      if (offset_saturated) take(&m->local_offset);
      return;
    }
    pos += len;
  }
  where.fail("zip64 extra field", "missing, but the central directory entry needs it");
}

std::vector<Member> read_central_directory(std::string_view b, const Directory& d, const Where& archive) {
  std::vector<Member> members;
  std::size_t pos = d.offset;
  const std::size_t end = d.offset + d.size;
  for (std::uint64_t i = 0; i < d.entries; ++i) {
    const Where where{archive.file, fmt::format("central directory entry {}", i)};
    if (end - pos < kCentralSize || load_le(b, pos, 4) != kCentralSig) where.fail("", "bad signature or truncated");
    Member m;
    m.flags = static_cast<std::uint16_t>(load_le(b, pos + 8, 2));
    m.method = static_cast<std::uint16_t>(load_le(b, pos + 10, 2));
    m.crc = static_cast<std::uint32_t>(load_le(b, pos + 16, 4));
    m.compressed_size = load_le(b, pos + 20, 4);
    m.size = load_le(b, pos + 24, 4);
    const std::size_t name_len = load_le(b, pos + 28, 2);
    const std::size_t extra_len = load_le(b, pos + 30, 2);
    const std::size_t comment_len = load_le(b, pos + 32, 2);
    m.local_offset = load_le(b, pos + 42, 4);
    const std::size_t total = kCentralSize + name_len + extra_len + comment_len;
    if (end - pos < total) where.fail("", "entry runs past the end of the central directory");
    m.name = std::string(b.substr(pos + kCentralSize, name_len));
    const Where named{archive.file, m.name.empty() ? where.member : excerpt(m.name, 200)};
    apply_zip64_extra(b.substr(pos + kCentralSize + name_len, extra_len), &m, m.local_offset == kU32Max, named);
    members.push_back(std::move(m));
    pos += total;
  }
  return members;
}

// RAII for a zlib inflate stream.
struct Inflater {
  z_stream zs{};
  bool ok = false;
  Inflater() { ok = inflateInit2(&zs, -MAX_WBITS) == Z_OK; }  // raw deflate, as ZIP stores it
  ~Inflater() {
    if (ok) inflateEnd(&zs);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
};

std::string inflate_member(std::string_view in, std::size_t out_size, const Where& where) {
  Inflater inf;
  if (!inf.ok) where.fail("", "zlib initialisation failed");
  std::string out(out_size, '\0');
  const auto* in_base = reinterpret_cast<const Bytef*>(in.data());
  auto* out_base = reinterpret_cast<Bytef*>(out.data());
  inf.zs.next_in = const_cast<Bytef*>(in_base);
  inf.zs.next_out = out_base;
  // zlib counts in uInt; feed chunks so members over 4 GiB work too.
  constexpr std::size_t kChunk = std::size_t{1} << 30;
  int rc = Z_OK;
  while (rc == Z_OK) {
    const std::size_t in_used = static_cast<std::size_t>(inf.zs.next_in - in_base);
    const std::size_t out_used = static_cast<std::size_t>(inf.zs.next_out - out_base);
    inf.zs.avail_in = static_cast<uInt>(std::min(in.size() - in_used, kChunk));
    inf.zs.avail_out = static_cast<uInt>(std::min(out.size() - out_used, kChunk));
    rc = inflate(&inf.zs, Z_NO_FLUSH);  // Z_OK means progress, so this loop ends
  }
  const std::size_t produced = static_cast<std::size_t>(inf.zs.next_out - out_base);
  if (rc == Z_STREAM_END && produced == out_size) return out;
  if (rc == Z_STREAM_END) {
    where.fail("",
               fmt::format("inflated size {} differs from the {} bytes recorded in the archive", produced, out_size));
  }
  if (rc == Z_BUF_ERROR && produced == out_size && inf.zs.next_in != in_base + in.size()) {
    where.fail("", fmt::format("inflated data is larger than the {} bytes recorded in the archive", out_size));
  }
  if (rc == Z_BUF_ERROR) where.fail("", "truncated compressed data");
  where.fail("", fmt::format("corrupt compressed data (zlib: {})", inf.zs.msg ? inf.zs.msg : zError(rc)));
}

// Extracts and CRC-checks one member's uncompressed bytes.
std::string extract_member(std::string_view b, const Member& m, const Where& where) {
  if (m.flags & 0x1) where.fail("", "encrypted members are not supported");
  if (!fits(b, m.local_offset, kLocalSize) || load_le(b, m.local_offset, 4) != kLocalSig) {
    where.fail("", fmt::format("no local file header at offset {}", m.local_offset));
  }
  // The local header carries its own name/extra lengths (numpy's local zip64 extra differs from
  // the central one), so skip by those.
  const std::uint64_t name_len = load_le(b, m.local_offset + 26, 2);
  const std::uint64_t extra_len = load_le(b, m.local_offset + 28, 2);
  const std::uint64_t data_offset = m.local_offset + kLocalSize + name_len + extra_len;
  if (!fits(b, data_offset, m.compressed_size)) {
    where.fail("", fmt::format("truncated member: {} compressed bytes at offset {}, file has {} bytes",
                               m.compressed_size, data_offset, b.size()));
  }
  const std::string_view raw = b.substr(data_offset, m.compressed_size);
  std::string data;
  if (m.method == 0) {
    if (m.size != m.compressed_size) {
      where.fail("", fmt::format("stored member has size {} but compressed size {}", m.size, m.compressed_size));
    }
    data = std::string(raw);
  } else if (m.method == 8) {
    if (m.size / kMaxDeflateRatio > m.compressed_size) {
      where.fail("",
                 fmt::format("implausible uncompressed size {} for {} compressed bytes", m.size, m.compressed_size));
    }
    data = inflate_member(raw, m.size, where);
  } else {
    where.fail("", fmt::format("unsupported compression method {} (supported: 0 stored, 8 deflate)", m.method));
  }
  const auto crc = static_cast<std::uint32_t>(
      crc32_z(crc32_z(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data.data()), data.size()));
  if (crc != m.crc) {
    where.fail("", fmt::format("CRC-32 mismatch: archive says {:08x}, data has {:08x} (corrupt file)", m.crc, crc));
  }
  return data;
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
  const Where archive{file_name, ""};
  const std::string_view b(bytes);
  const Directory dir = find_directory(b, archive);
  std::map<std::string, FloatTensor> arrays;
  for (const Member& m : read_central_directory(b, dir, archive)) {
    // numpy.load strips ".npy" from member names to form the keys; do the same.
    std::string key = m.name;
    if (key.size() >= 4 && key.compare(key.size() - 4, 4, ".npy") == 0) key.resize(key.size() - 4);
    // Names may hold arbitrary bytes; messages get a printable form.
    const Where where{file_name, key.empty() ? "<unnamed member>" : excerpt(key, 200)};
    if (arrays.count(key)) where.fail("", "duplicate member in the archive");
    arrays[key] = parse_npy_at(extract_member(b, m, where), where);
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
  // Fixed DOS timestamp (1980-01-01 00:00) keeps the output reproducible.
  constexpr std::uint16_t kDosTime = 0;
  constexpr std::uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;
  std::string out;
  std::string central;
  std::size_t count = 0;
  for (const auto& [key, tensor] : arrays) {
    if (key.empty()) throw std::invalid_argument("serialize_npz: empty array name");
    const std::string name = key + ".npy";
    const std::string payload = serialize_npy(tensor);
    const auto crc = static_cast<std::uint32_t>(
        crc32_z(crc32_z(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(payload.data()), payload.size()));
    const std::size_t offset = out.size();
    ++count;
    if (payload.size() >= kU32Max || offset >= kU32Max || name.size() > 0xffff || count >= 0xffff) {
      throw std::invalid_argument("serialize_npz: '" + key + "' does not fit in a non-zip64 archive (4 GiB limit)");
    }
    // Bit 11: the name is UTF-8 (what Python's zipfile sets for non-ASCII names).
    const bool utf8 =
        std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
    const std::uint16_t flags = utf8 ? 0x800 : 0;
    auto common = [&](std::string& h) {  // fields shared by the local and central headers
      put_le(h, 20, 2);                  // version needed: 2.0
      put_le(h, flags, 2);
      put_le(h, 0, 2);  // method: stored
      put_le(h, kDosTime, 2);
      put_le(h, kDosDate, 2);
      put_le(h, crc, 4);
      put_le(h, payload.size(), 4);
      put_le(h, payload.size(), 4);
      put_le(h, name.size(), 2);
      put_le(h, 0, 2);  // extra length
    };
    put_le(out, kLocalSig, 4);
    common(out);
    out += name;
    out += payload;

    put_le(central, kCentralSig, 4);
    put_le(central, (3 << 8) | 20, 2);  // made by: Unix, 2.0
    common(central);
    put_le(central, 0, 2);               // comment length
    put_le(central, 0, 2);               // disk number
    put_le(central, 0, 2);               // internal attributes
    put_le(central, 0100644u << 16, 4);  // external attributes: regular file, rw-r--r--
    put_le(central, offset, 4);
    central += name;
  }
  const std::size_t cd_offset = out.size();
  if (cd_offset >= kU32Max || central.size() >= kU32Max) {
    throw std::invalid_argument("serialize_npz: archive does not fit in a non-zip64 archive (4 GiB limit)");
  }
  out += central;
  put_le(out, kEocdSig, 4);
  put_le(out, 0, 2);  // this disk
  put_le(out, 0, 2);  // disk with the central directory
  put_le(out, count, 2);
  put_le(out, count, 2);
  put_le(out, central.size(), 4);
  put_le(out, cd_offset, 4);
  put_le(out, 0, 2);  // comment length
  return out;
}

void write_npz(const std::string& path, const std::map<std::string, FloatTensor>& arrays) {
  write_file_atomic(path, serialize_npz(arrays));
}

}  // namespace capsgen
