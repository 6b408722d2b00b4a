// ZIP container reading and writing: the archive layer under .npz (npy.cpp). Knows nothing about
// .npy; member payloads are plain bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace capsgen {

struct ZipEntry {
  std::string name;
  std::string data;
};

namespace zip_detail {
// One central-directory entry, zip64 values applied (internal to ZipReader).
struct Member {
  std::string name;
  std::uint16_t flags = 0;
  std::uint16_t method = 0;
  std::uint32_t crc = 0;
  std::uint64_t compressed_size = 0;
  std::uint64_t size = 0;
  std::uint64_t local_offset = 0;
};
}  // namespace zip_detail

// Reads a ZIP archive: stored or deflate members, zip64 (as NumPy writes it), an archive comment.
// The constructor finds the end-of-central-directory record and reads the whole central directory;
// extract() then reads, decompresses and CRC-checks one member on demand. Every read is
// bounds-checked, so truncated or corrupt archives end in an InputError, never in an out-of-bounds
// read or a huge allocation. Errors are InputError(file_name, 0, 0, field, message), field being
// the archive structure at fault ("central directory", "central directory entry 2", ...) or the
// member. The bytes must outlive the reader.
class ZipReader {
 public:
  ZipReader(std::string_view bytes, std::string file_name);

  std::size_t size() const { return members_.size(); }
  // Raw member name as stored in the archive (may hold arbitrary bytes).
  const std::string& name(std::size_t i) const { return members_.at(i).name; }
  // Uncompressed size of member i as the central directory records it (extract() checks it).
  std::uint64_t uncompressed_size(std::size_t i) const { return members_.at(i).size; }
  // Uncompressed bytes of member i. Its errors carry `label` as the InputError field, so the caller
  // decides how the member is named in messages (e.g. a printable form of its key).
  std::string extract(std::size_t i, const std::string& label) const;

 private:
  std::string_view bytes_;
  std::string file_name_;
  std::vector<zip_detail::Member> members_;
};

// Every member of an archive, in central-directory order (duplicate names are kept). Member errors
// are labelled with a printable form of the member name. Throws InputError like ZipReader.
std::vector<ZipEntry> read_zip(std::string_view bytes, const std::string& file_name);

// Thrown when an archive would need zip64 (4 GiB of data or offsets, 65535 members, or a name
// longer than 65535 bytes); the writer only produces classic ZIP.
struct ZipLimitError : std::length_error {
  using std::length_error::length_error;
};

// Builds a ZIP archive of STORED (uncompressed) members, as numpy.savez does, with a fixed DOS
// timestamp (1980-01-01 00:00) so the output is reproducible byte for byte. Names with bytes >= 0x80
// get the UTF-8 flag (as Python's zipfile sets it).
class ZipWriter {
 public:
  // Appends a member; throws ZipLimitError (archive unchanged) if it does not fit.
  void add(std::string_view name, std::string_view data);
  // Appends the central directory and end record and returns the archive; the writer is then empty.
  // Throws ZipLimitError if the central directory does not fit.
  std::string finish();

 private:
  std::string out_;
  std::string central_;
  std::size_t count_ = 0;
};

// ZipWriter over a list of entries.
std::string write_zip(const std::vector<ZipEntry>& entries);

}  // namespace capsgen
