// Reading a dataset file: the file and line limits, the bytes (NUL, UTF-8), the format, then
// each line through the JSONL or TSV line reader into a DatasetBuilder.
//
// The reader is written for hostile input: it checks size, bytes and line length before
// parsing, bounds JSON nesting, and never indexes by a value it has not checked. Every
// error is a pelab::Error naming the file and line.
#include <filesystem>
#include <fstream>
#include <variant>

#include "data/dataset_builder.h"
#include "data/dataset_checks.h"
#include "pelab/core/error.h"
#include "pelab/data/file_dataset.h"
#include "pelab/io/read_file.h"

namespace pelab {

namespace fs = std::filesystem;

namespace {

using dataset::DatasetBuilder;

void check_bytes(const DatasetBuilder& builder, int64_t line, std::string_view text) {
  const size_t nul = text.find('\0');
  if (nul != std::string_view::npos)
    builder.fail(line, fmt::format("binary content (a NUL byte at column {}); a dataset is "
                                   "UTF-8 text",
                                   nul + 1));
  const size_t bad =
      dataset::invalid_utf8_at(reinterpret_cast<const unsigned char*>(text.data()), text.size());
  if (bad != text.size())
    builder.fail(line, fmt::format("invalid UTF-8 (byte 0x{:02x} at column {}); a dataset is "
                                   "UTF-8 text",
                                   static_cast<unsigned char>(text[bad]), bad + 1));
}

// The line reader of a format, made when the format is known (at the first non-blank line
// unless the file name gave it).
class Lines {
 public:
  explicit Lines(DatasetBuilder& builder) : builder_(builder) {}

  void read(int64_t line, std::string_view text) {
    if (std::holds_alternative<std::monostate>(reader_)) start(text);
    if (auto* jsonl = std::get_if<dataset::JsonlLineReader>(&reader_))
      jsonl->read(line, text);
    else
      std::get<dataset::TsvLineReader>(reader_).read(line, text);
  }

  void start_as(DatasetFormat format) {
    builder_.set_format(format);
    if (format == DatasetFormat::Jsonl)
      reader_.emplace<dataset::JsonlLineReader>(builder_);
    else
      reader_.emplace<dataset::TsvLineReader>(builder_);
  }

 private:
  // Without a format from the file name: JSONL when the first line starts with '{'.
  void start(std::string_view first_line) {
    const size_t first = first_line.find_first_not_of(" \t");
    start_as(first_line[first] == '{' ? DatasetFormat::Jsonl : DatasetFormat::Tsv);
  }

  DatasetBuilder& builder_;
  std::variant<std::monostate, dataset::JsonlLineReader, dataset::TsvLineReader> reader_;
};

ParsedDataset parse(const std::string& text, const std::string& source,
                    std::optional<DatasetDefaults> defaults) {
  PELAB_CHECK(static_cast<int64_t>(text.size()) <= kDatasetMaxFileBytes,
              "{}: {} bytes is larger than the {} MiB limit for a dataset file", source,
              text.size(), kDatasetMaxFileBytes >> 20);
  DatasetBuilder builder(source, std::move(defaults));
  Lines lines(builder);
  if (const std::optional<DatasetFormat> by_name = dataset_format_of_path(source))
    lines.start_as(*by_name);
  size_t pos = 0;
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) pos = 3;  // a UTF-8 byte-order mark
  int64_t line = 0;
  while (pos < text.size()) {
    ++line;
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const size_t next = end + 1;
    if (end > pos && text[end - 1] == '\r') --end;
    if (static_cast<int64_t>(end - pos) > kDatasetMaxLineBytes)
      builder.fail(line, fmt::format("the line has {} bytes; the limit is {} (1 MiB)", end - pos,
                                     kDatasetMaxLineBytes));
    const std::string_view view(text.data() + pos, end - pos);
    check_bytes(builder, line, view);
    pos = next;
    if (view.find_first_not_of(" \t") == std::string_view::npos) continue;  // blank
    lines.read(line, view);
  }
  return builder.finish(line);
}

std::string lower_extension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  for (char& c : ext)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return ext;
}

}  // namespace

const char* to_string(DatasetFormat format) {
  return format == DatasetFormat::Jsonl ? "jsonl" : "tsv";
}

DatasetFormat parse_dataset_format(const std::string& name) {
  if (name == "jsonl") return DatasetFormat::Jsonl;
  if (name == "tsv") return DatasetFormat::Tsv;
  throw Error(fmt::format("unknown dataset format {} (valid: jsonl, tsv)", dataset::quote(name)));
}

std::optional<DatasetFormat> dataset_format_of_path(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext == ".jsonl" || ext == ".ndjson" || ext == ".json") return DatasetFormat::Jsonl;
  if (ext == ".tsv") return DatasetFormat::Tsv;
  return std::nullopt;
}

ParsedDataset parse_dataset_text(const std::string& text, const std::string& source) {
  return parse(text, source, std::nullopt);
}

ParsedDataset parse_dataset_text(const std::string& text, const std::string& source,
                                 const DatasetDefaults& defaults) {
  return parse(text, source, defaults);
}

ParsedDataset read_dataset_file(const std::string& path,
                                const std::optional<DatasetDefaults>& defaults) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  PELAB_CHECK(!ec && fs::exists(status), "{}: no such file", path);
  PELAB_CHECK(!fs::is_directory(status), "{}: is a directory, not a dataset file", path);
  const uintmax_t size = fs::file_size(path, ec);
  PELAB_CHECK(ec || size <= static_cast<uintmax_t>(kDatasetMaxFileBytes),
              "{}: {:.1f} MiB is larger than the {} MiB limit for a dataset file; split or "
              "sample it",
              path, static_cast<double>(size) / (1 << 20), kDatasetMaxFileBytes >> 20);
  // Opened without blocking: a FIFO or a device is refused, never waited on.
  bool over_limit = false;
  const std::string text = read_regular_file(
      path, "a dataset file", static_cast<uint64_t>(kDatasetMaxFileBytes), &over_limit);
  PELAB_CHECK(!over_limit,
              "{}: larger than the {} MiB limit for a dataset file; split or sample it", path,
              kDatasetMaxFileBytes >> 20);
  return parse(text, path, defaults);
}

}  // namespace pelab
