// ZIP container reading and writing (see zip.hpp). Every read is bounds-checked against the input
// bytes, so truncated or corrupt archives end in an InputError, never in an out-of-bounds read or a
// huge allocation.
#include "weights/zip.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <utility>

#include "core/input_error.hpp"
#include "weights/byte_io.hpp"

namespace capsgen {
namespace {

using weights_detail::excerpt;
using weights_detail::load_le;
using weights_detail::put_le;
using weights_detail::Where;
using zip_detail::Member;

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

struct Directory {
  std::uint64_t entries = 0;
  std::uint64_t size = 0;
  std::uint64_t offset = 0;
};

bool fits(std::string_view b, std::uint64_t off, std::uint64_t len) { return off <= b.size() && len <= b.size() - off; }

std::uint32_t crc32_of(std::string_view data) {
  return static_cast<std::uint32_t>(
      crc32_z(crc32_z(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data.data()), data.size()));
}

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
  const std::uint32_t crc = crc32_of(data);
  if (crc != m.crc) {
    where.fail("", fmt::format("CRC-32 mismatch: archive says {:08x}, data has {:08x} (corrupt file)", m.crc, crc));
  }
  return data;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

ZipReader::ZipReader(std::string_view bytes, std::string file_name) : bytes_(bytes), file_name_(std::move(file_name)) {
  const Where archive{file_name_, ""};
  members_ = read_central_directory(bytes_, find_directory(bytes_, archive), archive);
}

std::string ZipReader::extract(std::size_t i, const std::string& label) const {
  return extract_member(bytes_, members_.at(i), Where{file_name_, label});
}

std::vector<ZipEntry> read_zip(std::string_view bytes, const std::string& file_name) {
  const ZipReader zip(bytes, file_name);
  std::vector<ZipEntry> entries;
  entries.reserve(zip.size());
  for (std::size_t i = 0; i < zip.size(); ++i) {
    // Same naming as the central-directory errors.
    const std::string& name = zip.name(i);
    const std::string label = name.empty() ? fmt::format("central directory entry {}", i) : excerpt(name, 200);
    entries.push_back({name, zip.extract(i, label)});
  }
  return entries;
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

void ZipWriter::add(std::string_view name, std::string_view data) {
  // Fixed DOS timestamp (1980-01-01 00:00) keeps the output reproducible.
  constexpr std::uint16_t kDosTime = 0;
  constexpr std::uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;
  const std::size_t offset = out_.size();
  if (data.size() >= kU32Max || offset >= kU32Max || name.size() > 0xffff || count_ + 1 >= 0xffff) {
    throw ZipLimitError(
        fmt::format("zip: member '{}' does not fit in a non-zip64 archive (4 GiB limit)", excerpt(name, 200)));
  }
  ++count_;
  const std::uint32_t crc = crc32_of(data);
  // Bit 11: the name is UTF-8 (what Python's zipfile sets for non-ASCII names).
  const bool utf8 = std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
  const std::uint16_t flags = utf8 ? 0x800 : 0;
  auto common = [&](std::string& h) {  // fields shared by the local and central headers
    put_le(h, 20, 2);                  // version needed: 2.0
    put_le(h, flags, 2);
    put_le(h, 0, 2);  // method: stored
    put_le(h, kDosTime, 2);
    put_le(h, kDosDate, 2);
    put_le(h, crc, 4);
    put_le(h, data.size(), 4);
    put_le(h, data.size(), 4);
    put_le(h, name.size(), 2);
    put_le(h, 0, 2);  // extra length
  };
  put_le(out_, kLocalSig, 4);
  common(out_);
  out_ += name;
  out_ += data;

  put_le(central_, kCentralSig, 4);
  put_le(central_, (3 << 8) | 20, 2);  // made by: Unix, 2.0
  common(central_);
  put_le(central_, 0, 2);               // comment length
  put_le(central_, 0, 2);               // disk number
  put_le(central_, 0, 2);               // internal attributes
  put_le(central_, 0100644u << 16, 4);  // external attributes: regular file, rw-r--r--
  put_le(central_, offset, 4);
  central_ += name;
}

std::string ZipWriter::finish() {
  const std::size_t cd_offset = out_.size();
  if (cd_offset >= kU32Max || central_.size() >= kU32Max) {
    throw ZipLimitError("zip: archive does not fit in a non-zip64 archive (4 GiB limit)");
  }
  std::string out = std::move(out_);
  out += central_;
  put_le(out, kEocdSig, 4);
  put_le(out, 0, 2);  // this disk
  put_le(out, 0, 2);  // disk with the central directory
  put_le(out, count_, 2);
  put_le(out, count_, 2);
  put_le(out, central_.size(), 4);
  put_le(out, cd_offset, 4);
  put_le(out, 0, 2);  // comment length
  out_.clear();
  central_.clear();
  count_ = 0;
  return out;
}

std::string write_zip(const std::vector<ZipEntry>& entries) {
  ZipWriter zip;
  for (const ZipEntry& e : entries) zip.add(e.name, e.data);
  return zip.finish();
}

}  // namespace capsgen
