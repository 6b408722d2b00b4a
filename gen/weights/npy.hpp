// NumPy .npy / .npz reading and writing (the interchange format of docs/weights.md).
#pragma once

#include <map>
#include <string>

#include "core/tensor.hpp"

namespace capsgen {

// Reads one .npy file (format versions 1.0, 2.0, 3.0). Supported dtypes: float16/32/64,
// int8/16/32/64, uint8/16/32/64 and bool, little- or big-endian, C or Fortran order; values are
// converted to float (C order). Throws InputError naming the file and the field. parse_npy takes
// the file's bytes; file_name is only used in messages.
FloatTensor read_npy(const std::string& path);
FloatTensor parse_npy(const std::string& bytes, const std::string& file_name);

// Reads every array of a .npz archive (stored or deflate-compressed members, zip64 as NumPy writes
// it). Keys are member names without the ".npy" suffix. Throws InputError.
std::map<std::string, FloatTensor> read_npz(const std::string& path);
std::map<std::string, FloatTensor> parse_npz(const std::string& bytes, const std::string& file_name);

// Writers (float32, C order). The .npz writer stores members uncompressed, as numpy.savez does.
// write_* replace the file atomically (via "<path>.tmp"); they throw InputError on I/O failure and
// std::invalid_argument on a malformed tensor/key or an archive too big for non-zip64 (4 GiB).
std::string serialize_npy(const FloatTensor& t);
void write_npy(const std::string& path, const FloatTensor& t);
std::string serialize_npz(const std::map<std::string, FloatTensor>& arrays);
void write_npz(const std::string& path, const std::map<std::string, FloatTensor>& arrays);

}  // namespace capsgen
