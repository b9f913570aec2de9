// safetensors reading and writing (checkpoints, model fixtures).
//
// Format: an 8-byte little-endian u64 header length N, N bytes of UTF-8 JSON (an object
// mapping tensor names to {"dtype", "shape", "data_offsets"}, plus an optional "__metadata__"
// object of strings), then the data region: the tensors' bytes, little-endian, row-major,
// covering the region exactly (no gaps, no overlaps). pelab reads and writes F32 and I64.
//
// The reader treats its input as hostile: any malformation is a pelab::Error with one line
// naming the file, the culprit and what would be valid; it never reads out of bounds and
// never allocates more than a small multiple of the input size.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "pelab/tensor/shape.h"
#include "pelab/tensor/tensor.h"

namespace pelab {

struct SafetensorsTensor {
  std::string name;
  std::string dtype;  // "F32" (values in f32) or "I64" (values in i64)
  Shape shape;
  std::vector<float> f32;
  std::vector<int64_t> i64;

  static SafetensorsTensor from_tensor(std::string name, const Tensor& tensor);         // F32
  static SafetensorsTensor from_int_tensor(std::string name, const IntTensor& tensor);  // I64
  int64_t numel() const { return pelab::numel(shape); }
};

struct SafetensorsFile {
  std::string source;  // the file name used in error messages
  std::map<std::string, std::string> metadata;
  std::vector<SafetensorsTensor> tensors;  // sorted by name when read

  // nullptr if there is no tensor with that name.
  const SafetensorsTensor* find(const std::string& name) const;
  // The F32 tensor `name` as a Tensor; throws if it is absent or not F32.
  Tensor tensor(const std::string& name) const;
  // The I64 tensor `name` as an IntTensor; throws if it is absent, not I64, or a value does
  // not fit in int32.
  IntTensor int_tensor(const std::string& name) const;
  // Throws if there is no metadata entry `key`.
  const std::string& metadata_value(const std::string& key) const;
};

// Reads a whole file. `read_safetensors_bytes` parses an in-memory image; `source_name` is
// used in error messages in place of a path.
SafetensorsFile read_safetensors(const std::string& path);
SafetensorsFile read_safetensors_bytes(const std::string& bytes, const std::string& source_name);

// The standard layout: header padded with spaces to a multiple of 8, tensors packed in name
// order, "__metadata__" omitted when empty. Throws on duplicate or reserved names, unsupported
// dtypes, negative dimensions, or a value count that does not match the shape.
std::string safetensors_bytes(const std::map<std::string, std::string>& metadata,
                              const std::vector<SafetensorsTensor>& tensors);
// safetensors_bytes, written atomically (see write_file_atomic).
void write_safetensors(const std::string& path, const std::map<std::string, std::string>& metadata,
                       const std::vector<SafetensorsTensor>& tensors);

// Collects tensors and metadata, then writes them:
//   SafetensorsWriter().add("w", w).add("tokens", ids).set_metadata("step", "10").write(path);
class SafetensorsWriter {
 public:
  SafetensorsWriter& add(const std::string& name, const Tensor& tensor);     // as F32
  SafetensorsWriter& add(const std::string& name, const IntTensor& tensor);  // as I64
  SafetensorsWriter& add(SafetensorsTensor tensor);
  SafetensorsWriter& set_metadata(const std::string& key, const std::string& value);

  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  std::string bytes() const { return safetensors_bytes(metadata_, tensors_); }
  void write(const std::string& path) const { write_safetensors(path, metadata_, tensors_); }

 private:
  std::map<std::string, std::string> metadata_;
  std::vector<SafetensorsTensor> tensors_;
  std::set<std::string> names_;
};

}  // namespace pelab
