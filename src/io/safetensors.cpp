#include "pelab/io/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <system_error>

#include "pelab/core/error.h"
#include "pelab/io/atomic_file.h"

namespace pelab {

static_assert(std::endian::native == std::endian::little,
              "pelab's safetensors I/O copies little-endian data as is; big-endian hosts are "
              "not supported");

using json = nlohmann::json;

namespace {

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // 100 MB, the cap of the reference reader
constexpr size_t kMaxDepth = 3;                    // header object > entry object > shape array
constexpr size_t kMaxArrayElements = 64;           // shapes of rank <= 64, data_offsets of length 2
constexpr size_t kMaxQuotedBytes = 80;             // untrusted strings are cut in messages

// Offset of the first byte that is not part of valid UTF-8, or npos.
size_t invalid_utf8_at(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0, min = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    } else {
      return i;
    }
    if (s.size() - i < len) return i;
    for (size_t k = 1; k < len; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (d & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

// An untrusted string, quoted for a one-line message: control bytes (and, unless the string
// is valid UTF-8, non-ASCII bytes) escaped, long strings cut at a character boundary.
std::string quote(std::string_view s) {
  const bool utf8 = invalid_utf8_at(s) == std::string_view::npos;
  std::string out = "'";
  size_t i = 0;
  for (; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const bool starts_char = !utf8 || (c & 0xC0) != 0x80;
    if (i >= kMaxQuotedBytes && starts_char) break;
    if (c == '\'' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7F || (c >= 0x80 && !utf8)) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '\'';
  if (i < s.size()) out += fmt::format(" (cut, {} bytes)", s.size());
  return out;
}

// A short description of an untrusted JSON value for messages.
std::string describe(const json& v) {
  switch (v.type()) {
    case json::value_t::string:
      return "the string " + quote(v.get_ref<const std::string&>());
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return v.dump();
    case json::value_t::array:
      return v.size() <= 8 ? quote(v.dump()) : fmt::format("an array of {} values", v.size());
    case json::value_t::object:
      return "an object";
    case json::value_t::boolean:
      return v.get<bool>() ? "true" : "false";
    case json::value_t::null:
      return "null";
    default:
      return v.type_name();
  }
}

std::string a_type(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::null:
      return "null";
    default:
      return "a number";
  }
}

std::string errno_text(int err) {
  return std::generic_category().message(err);
}

// Builds the header DOM from SAX events, rejecting what a DOM parser would silently accept
// or blow up on: duplicate keys (nlohmann keeps the last), nesting deeper than a header
// needs, and long arrays (a 100 MB "[0,0,..." would otherwise take gigabytes).
class HeaderParser final : public nlohmann::json_sax<json> {
 public:
  explicit HeaderParser(const std::string& source) : source_(source) {}

  json& root() { return root_; }
  const std::string& error() const { return error_; }

  bool null() override { return place(json(nullptr)) != nullptr; }
  bool boolean(bool v) override { return place(json(v)) != nullptr; }
  bool number_integer(number_integer_t v) override { return place(json(v)) != nullptr; }
  bool number_unsigned(number_unsigned_t v) override { return place(json(v)) != nullptr; }
  bool number_float(number_float_t v, const string_t&) override {
    return place(json(v)) != nullptr;
  }
  bool string(string_t& v) override { return place(json(std::move(v))) != nullptr; }
  bool binary(binary_t&) override {
    error_ = fmt::format("{}: header holds binary data; expected JSON text", source_);
    return false;
  }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& k) override {
    Frame& top = stack_.back();
    if (top.value->contains(k)) {
      if (stack_.size() == 1 && k == "__metadata__") {
        error_ = fmt::format("{}: '__metadata__' appears twice in the header; it may appear once",
                             source_);
      } else if (stack_.size() == 1) {
        error_ = fmt::format(
            "{}: tensor name {} appears twice in the header; tensor names must be unique", source_,
            quote(k));
      } else {
        error_ = fmt::format("{}: key {} appears twice in {}; keys must be unique", source_,
                             quote(k), top.path);
      }
      return false;
    }
    top.key = std::move(k);
    return true;
  }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    std::string what = ex.what();
    const size_t bracket = what.find("] ");
    if (what.rfind("[json.exception.", 0) == 0 && bracket != std::string::npos) {
      what = what.substr(bracket + 2);
    }
    // The message quotes input; keep it one printable line.
    std::string clean;
    for (const char c : what) {
      clean += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
    }
    if (clean.size() > 300) {
      size_t cut = 300;  // at a character boundary
      while (cut > 0 && (static_cast<unsigned char>(clean[cut]) & 0xC0) == 0x80) --cut;
      clean = clean.substr(0, cut) + "...";
    }
    error_ = fmt::format(
        "{}: header is not valid JSON (near byte {} of the header: {}); expected a JSON object "
        "mapping tensor names to {{\"dtype\", \"shape\", \"data_offsets\"}}",
        source_, position, clean);
    return false;
  }

 private:
  struct Frame {
    json* value;
    std::string key;   // the pending key, for objects
    std::string path;  // for messages
  };

  std::string child_path() const {
    if (stack_.empty()) return "the header";
    const Frame& top = stack_.back();
    if (top.value->is_array()) return fmt::format("{}[{}]", top.path, top.value->size());
    if (stack_.size() == 1) return quote(top.key);
    return fmt::format("{}.{}", top.path, quote(top.key));
  }

  json* place(json&& v) {
    if (stack_.empty()) {
      if (!v.is_object()) {
        error_ = fmt::format(
            "{}: header is {}, expected a JSON object mapping tensor names to {{\"dtype\", "
            "\"shape\", \"data_offsets\"}}",
            source_, a_type(v));
        return nullptr;
      }
      root_ = std::move(v);
      return &root_;
    }
    Frame& top = stack_.back();
    json& parent = *top.value;
    if (parent.is_array()) {
      if (parent.size() >= kMaxArrayElements) {
        error_ = fmt::format(
            "{}: array {} has more than {} elements; shape and data_offsets are short arrays",
            source_, top.path, kMaxArrayElements);
        return nullptr;
      }
      parent.push_back(std::move(v));
      return &parent.back();
    }
    auto& object = parent.get_ref<json::object_t&>();
    return &object.emplace(std::move(top.key), std::move(v)).first->second;
  }

  bool open(json&& container) {
    std::string path = child_path();
    if (stack_.size() >= kMaxDepth) {
      error_ = fmt::format(
          "{}: header nests too deeply at {}; entries hold flat arrays of integers (shape, "
          "data_offsets) and __metadata__ holds strings",
          source_, path);
      return false;
    }
    json* slot = place(std::move(container));
    if (slot == nullptr) return false;
    stack_.push_back({slot, {}, std::move(path)});
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  const std::string& source_;
  json root_;
  std::vector<Frame> stack_;
  std::string error_;
};

struct Entry {
  const std::string* name;
  const std::string* dtype;
  Shape shape;
  uint64_t begin = 0, end = 0;
};

size_t dtype_size(const std::string& dtype) {
  if (dtype == "F32") return 4;
  if (dtype == "I64") return 8;
  return 0;
}

// Byte size of `shape` elements of `elem_size` bytes, or false if it exceeds INT64_MAX
// (the product of the non-zero dimensions is checked, so numel() of any prefix is safe).
bool byte_size(const Shape& shape, size_t elem_size, uint64_t* out) {
  uint64_t bytes = elem_size;
  bool empty = false;
  for (const int64_t d : shape) {
    if (d == 0) {
      empty = true;
      continue;
    }
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes)) return false;
    if (bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  }
  *out = empty ? 0 : bytes;
  return true;
}

// A non-negative JSON integer ("-0" included); false for anything else.
bool non_negative(const json& v, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer() && v.get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(v.get<int64_t>());
    return true;
  }
  return false;
}

const json& field(const std::string& source, const std::string& name, const json& entry,
                  const char* key) {
  const auto it = entry.find(key);
  PELAB_CHECK(it != entry.end(),
              "{}: tensor {} lacks \"{}\" (each entry needs \"dtype\", \"shape\" and "
              "\"data_offsets\")",
              source, quote(name), key);
  return *it;
}

Entry parse_entry(const std::string& source, const std::string& name, const json& entry,
                  uint64_t data_size) {
  const std::string qname = quote(name);
  PELAB_CHECK(entry.is_object(),
              "{}: entry {} is {}, expected an object with \"dtype\", \"shape\" and "
              "\"data_offsets\"",
              source, qname, describe(entry));
  Entry e;
  e.name = &name;

  const json& dtype = field(source, name, entry, "dtype");
  PELAB_CHECK(dtype.is_string(), "{}: dtype of {} is {}, expected a string such as \"F32\"", source,
              qname, describe(dtype));
  e.dtype = &dtype.get_ref<const std::string&>();
  const size_t elem_size = dtype_size(*e.dtype);
  PELAB_CHECK(elem_size != 0, "{}: unsupported dtype {} for {} (pelab reads F32 and I64)", source,
              quote(*e.dtype), qname);

  const json& shape = field(source, name, entry, "shape");
  PELAB_CHECK(shape.is_array(), "{}: shape of {} is {}, expected an array of non-negative integers",
              source, qname, describe(shape));
  for (size_t i = 0; i < shape.size(); ++i) {
    uint64_t d = 0;
    PELAB_CHECK(non_negative(shape[i], &d) &&
                    d <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                "{}: shape of {} has {} at index {}; dimensions must be non-negative integers",
                source, qname, describe(shape[i]), i);
    e.shape.push_back(static_cast<int64_t>(d));
  }
  uint64_t nbytes = 0;
  PELAB_CHECK(byte_size(e.shape, elem_size, &nbytes),
              "{}: shape {} of {} has too many elements (its byte size overflows 63 bits)", source,
              to_string(e.shape), qname);

  const json& offsets = field(source, name, entry, "data_offsets");
  PELAB_CHECK(offsets.is_array() && offsets.size() == 2 && non_negative(offsets[0], &e.begin) &&
                  non_negative(offsets[1], &e.end),
              "{}: data_offsets of {} is {}, expected [begin, end] with two non-negative integers",
              source, qname, describe(offsets));
  PELAB_CHECK(e.begin <= e.end,
              "{}: tensor {} has data_offsets [{}, {}] out of order (begin must not exceed end)",
              source, qname, e.begin, e.end);
  PELAB_CHECK(e.end <= data_size,
              "{}: tensor {} has data_offsets [{}, {}] beyond the data region of {} bytes", source,
              qname, e.begin, e.end, data_size);
  PELAB_CHECK(e.end - e.begin == nbytes,
              "{}: tensor {} has data_offsets [{}, {}] but {} {} needs {} bytes", source, qname,
              e.begin, e.end, *e.dtype, to_string(e.shape), nbytes);
  return e;
}

// The tensors must tile the data region: sorted by offset, each starts where the previous
// one ended, and the last ends at the end of the region.
void check_coverage(const std::string& source, std::vector<const Entry*> entries,
                    uint64_t data_size) {
  std::sort(entries.begin(), entries.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  const Entry* owner = nullptr;  // the last non-empty tensor, which ends at `covered`
  for (const Entry* e : entries) {
    if (e->begin < covered) {
      throw Error(fmt::format(
          "{}: tensors {} [{}, {}] and {} [{}, {}] overlap; each byte of the data region must "
          "belong to exactly one tensor",
          source, quote(*owner->name), owner->begin, owner->end, quote(*e->name), e->begin,
          e->end));
    }
    if (e->begin > covered) {
      throw Error(fmt::format(
          "{}: bytes [{}, {}) of the data region belong to no tensor (between {} and {}); "
          "tensors must cover the data region without gaps",
          source, covered, e->begin, owner ? quote(*owner->name) : "the start", quote(*e->name)));
    }
    if (e->end > e->begin) {
      covered = e->end;
      owner = e;
    }
  }
  PELAB_CHECK(covered == data_size,
              "{}: bytes [{}, {}) at the end of the data region belong to no tensor; tensors must "
              "cover the data region without gaps",
              source, covered, data_size);
}

}  // namespace

// ---- SafetensorsTensor / SafetensorsFile -----------------------------------------------------

SafetensorsTensor SafetensorsTensor::from_tensor(std::string name, const Tensor& tensor) {
  PELAB_CHECK(tensor.defined(), "cannot store tensor {}: it is undefined", quote(name));
  SafetensorsTensor t;
  t.name = std::move(name);
  t.dtype = "F32";
  t.shape = tensor.shape();
  t.f32 = tensor.to_vector();
  return t;
}

SafetensorsTensor SafetensorsTensor::from_int_tensor(std::string name, const IntTensor& tensor) {
  SafetensorsTensor t;
  t.name = std::move(name);
  t.dtype = "I64";
  t.shape = tensor.shape;
  t.i64.assign(tensor.values.begin(), tensor.values.end());
  return t;
}

const SafetensorsTensor* SafetensorsFile::find(const std::string& name) const {
  for (const SafetensorsTensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

namespace {

const SafetensorsTensor& find_typed(const SafetensorsFile& file, const std::string& name,
                                    const char* dtype) {
  const SafetensorsTensor* t = file.find(name);
  PELAB_CHECK(t != nullptr, "{}: no tensor {} (the file holds {} tensors)", file.source,
              quote(name), file.tensors.size());
  PELAB_CHECK(t->dtype == dtype, "{}: tensor {} is {}, expected {}", file.source, quote(name),
              t->dtype, dtype);
  return *t;
}

}  // namespace

Tensor SafetensorsFile::tensor(const std::string& name) const {
  const SafetensorsTensor& t = find_typed(*this, name, "F32");
  return Tensor::from_vector(t.shape, t.f32);
}

IntTensor SafetensorsFile::int_tensor(const std::string& name) const {
  const SafetensorsTensor& t = find_typed(*this, name, "I64");
  std::vector<int32_t> values(t.i64.size());
  for (size_t i = 0; i < t.i64.size(); ++i) {
    const int64_t v = t.i64[i];
    PELAB_CHECK(
        v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(),
        "{}: tensor {} holds {} at flat index {}, which does not fit in int32 (pelab's "
        "integer tensors are int32)",
        source, quote(name), v, i);
    values[i] = static_cast<int32_t>(v);
  }
  return IntTensor(t.shape, std::move(values));
}

const std::string& SafetensorsFile::metadata_value(const std::string& key) const {
  const auto it = metadata.find(key);
  PELAB_CHECK(it != metadata.end(), "{}: no __metadata__ entry {} (the file has {} entries)",
              source, quote(key), metadata.size());
  return it->second;
}

// ---- reading ---------------------------------------------------------------------------------

SafetensorsFile read_safetensors_bytes(const std::string& bytes, const std::string& source) {
  const uint64_t size = bytes.size();
  PELAB_CHECK(size >= 8,
              "{}: file is {} bytes, shorter than the 8-byte header length that starts a "
              "safetensors file",
              source, size);
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);  // little-endian host (static_assert above)
  PELAB_CHECK(header_len <= size - 8,
              "{}: header length {} exceeds the file size {} (at most {} header bytes can follow "
              "the 8-byte length)",
              source, header_len, size, size - 8);
  PELAB_CHECK(header_len <= kMaxHeaderBytes,
              "{}: header length {} exceeds the {}-byte limit pelab accepts", source, header_len,
              kMaxHeaderBytes);
  PELAB_CHECK(header_len > 0, "{}: header is empty; expected a JSON object", source);
  const std::string_view header(bytes.data() + 8, header_len);
  const uint64_t data_size = size - 8 - header_len;
  const char* data = bytes.data() + 8 + header_len;

  const size_t bad = invalid_utf8_at(header);
  PELAB_CHECK(bad == std::string_view::npos,
              "{}: header is not valid UTF-8 (byte 0x{:02x} at header offset {}); expected UTF-8 "
              "JSON",
              source, static_cast<unsigned char>(header[bad < header.size() ? bad : 0]), bad);

  // nlohmann's lexer takes a NUL byte for the end of input, which would accept
  // "{...}\0garbage"; a raw NUL is never valid JSON, so reject it here.
  const size_t nul = header.find('\0');
  PELAB_CHECK(nul == std::string_view::npos,
              "{}: header is not valid JSON (a NUL byte at header offset {}); expected JSON text "
              "padded with spaces",
              source, nul);

  HeaderParser parser(source);
  const bool ok = json::sax_parse(header.begin(), header.end(), &parser, json::input_format_t::json,
                                  /*strict=*/true,
                                  /*ignore_comments=*/false);
  if (!ok || !parser.error().empty()) {
    PELAB_ASSERT(!parser.error().empty());
    throw Error(parser.error());
  }
  const json& root = parser.root();
  PELAB_CHECK(root.is_object(),
              "{}: header is {}, expected a JSON object mapping tensor names to "
              "{{\"dtype\", \"shape\", \"data_offsets\"}}",
              source, a_type(root));

  SafetensorsFile file;
  file.source = source;
  std::vector<Entry> entries;
  entries.reserve(root.size());
  for (const auto& [name, value] : root.get_ref<const json::object_t&>()) {
    if (name == "__metadata__") {
      PELAB_CHECK(value.is_object(), "{}: __metadata__ is {}, expected an object of strings",
                  source, describe(value));
      for (const auto& [key, v] : value.get_ref<const json::object_t&>()) {
        PELAB_CHECK(v.is_string(),
                    "{}: __metadata__ value for {} is {}; metadata values must be strings", source,
                    quote(key), describe(v));
        file.metadata.emplace(key, v.get<std::string>());
      }
      continue;
    }
    entries.push_back(parse_entry(source, name, value, data_size));
  }

  std::vector<const Entry*> by_offset;
  by_offset.reserve(entries.size());
  for (const Entry& e : entries) by_offset.push_back(&e);
  check_coverage(source, std::move(by_offset), data_size);

  // Allocation is now bounded: the tensors tile the data region that is in memory.
  file.tensors.reserve(entries.size());
  for (const Entry& e : entries) {  // name order (the header is a sorted map)
    SafetensorsTensor t;
    t.name = *e.name;
    t.dtype = *e.dtype;
    t.shape = e.shape;
    const size_t nbytes = e.end - e.begin;
    const int64_t n = numel(e.shape);
    if (t.dtype == "F32") {
      t.f32.resize(static_cast<size_t>(n));
      if (nbytes > 0) std::memcpy(t.f32.data(), data + e.begin, nbytes);
    } else {
      t.i64.resize(static_cast<size_t>(n));
      if (nbytes > 0) std::memcpy(t.i64.data(), data + e.begin, nbytes);
    }
    file.tensors.push_back(std::move(t));
  }
  return file;
}

SafetensorsFile read_safetensors(const std::string& path) {
  // Non-blocking: opening a FIFO for reading would wait for a writer before any check.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  PELAB_CHECK(fd >= 0, "{}: cannot open the safetensors file: {}", path, errno_text(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  PELAB_CHECK(::fstat(fd, &st) == 0, "{}: cannot stat the safetensors file: {}", path,
              errno_text(errno));
  PELAB_CHECK(S_ISREG(st.st_mode), "{}: is not a regular file; expected a safetensors file", path);
  const int flags = ::fcntl(fd, F_GETFL);
  PELAB_CHECK(flags >= 0 && ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0,
              "{}: cannot open the safetensors file: {}", path, errno_text(errno));
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    PELAB_CHECK(n >= 0, "{}: cannot read the safetensors file: {}", path, errno_text(errno));
    PELAB_CHECK(n > 0, "{}: the file shrank from {} to {} bytes while being read", path,
                bytes.size(), done);
    done += static_cast<size_t>(n);
  }
  return read_safetensors_bytes(bytes, path);
}

// ---- writing ---------------------------------------------------------------------------------

namespace {

std::string encode(const std::string& where, const std::map<std::string, std::string>& metadata,
                   const std::vector<SafetensorsTensor>& tensors) {
  for (const auto& [key, value] : metadata) {
    PELAB_CHECK(invalid_utf8_at(key) == std::string_view::npos &&
                    invalid_utf8_at(value) == std::string_view::npos,
                "{}: cannot write __metadata__ entry {}: keys and values must be valid UTF-8",
                where, quote(key));
  }
  std::vector<const SafetensorsTensor*> order;
  order.reserve(tensors.size());
  for (const SafetensorsTensor& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const SafetensorsTensor* a, const SafetensorsTensor* b) {
    return a->name < b->name;
  });

  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const SafetensorsTensor& t = *order[i];
    const std::string qname = quote(t.name);
    PELAB_CHECK(i == 0 || order[i - 1]->name != t.name,
                "{}: tensor name {} appears twice; tensor names must be unique", where, qname);
    PELAB_CHECK(t.name != "__metadata__", "{}: '__metadata__' is reserved and cannot name a tensor",
                where);
    PELAB_CHECK(invalid_utf8_at(t.name) == std::string_view::npos,
                "{}: tensor name {} is not valid UTF-8", where, qname);
    const size_t elem_size = dtype_size(t.dtype);
    PELAB_CHECK(elem_size != 0, "{}: unsupported dtype {} for {} (pelab writes F32 and I64)", where,
                quote(t.dtype), qname);
    for (const int64_t d : t.shape) {
      PELAB_CHECK(d >= 0, "{}: tensor {} has shape {}; dimensions must be non-negative", where,
                  qname, to_string(t.shape));
    }
    uint64_t nbytes = 0;
    PELAB_CHECK(byte_size(t.shape, elem_size, &nbytes), "{}: tensor {} has too many elements ({})",
                where, qname, to_string(t.shape));
    const uint64_t n = nbytes / elem_size;
    const bool f32 = t.dtype == "F32";
    const size_t held = f32 ? t.f32.size() : t.i64.size();
    const size_t other = f32 ? t.i64.size() : t.f32.size();
    PELAB_CHECK(held == n && other == 0,
                "{}: tensor {} is {} {} ({} values) but holds {} {} values and {} {} values", where,
                qname, t.dtype, to_string(t.shape), n, t.f32.size(), "F32", t.i64.size(), "I64");
    header[t.name] = {
        {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
  }

  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t header_len = text.size();
  std::string out;
  out.reserve(8 + text.size() + offset);
  out.append(reinterpret_cast<const char*>(&header_len), 8);
  out += text;
  for (const SafetensorsTensor* t : order) {
    if (t->dtype == "F32") {
      out.append(reinterpret_cast<const char*>(t->f32.data()), t->f32.size() * sizeof(float));
    } else {
      out.append(reinterpret_cast<const char*>(t->i64.data()), t->i64.size() * sizeof(int64_t));
    }
  }
  return out;
}

}  // namespace

std::string safetensors_bytes(const std::map<std::string, std::string>& metadata,
                              const std::vector<SafetensorsTensor>& tensors) {
  return encode("safetensors", metadata, tensors);
}

void write_safetensors(const std::string& path, const std::map<std::string, std::string>& metadata,
                       const std::vector<SafetensorsTensor>& tensors) {
  write_file_atomic(path, encode(path, metadata, tensors));
}

SafetensorsWriter& SafetensorsWriter::add(const std::string& name, const Tensor& tensor) {
  return add(SafetensorsTensor::from_tensor(name, tensor));
}

SafetensorsWriter& SafetensorsWriter::add(const std::string& name, const IntTensor& tensor) {
  return add(SafetensorsTensor::from_int_tensor(name, tensor));
}

SafetensorsWriter& SafetensorsWriter::add(SafetensorsTensor tensor) {
  PELAB_CHECK(names_.insert(tensor.name).second,
              "safetensors writer: tensor {} was already added; tensor names must be unique",
              quote(tensor.name));
  tensors_.push_back(std::move(tensor));
  return *this;
}

SafetensorsWriter& SafetensorsWriter::set_metadata(const std::string& key,
                                                   const std::string& value) {
  metadata_[key] = value;
  return *this;
}

}  // namespace pelab
