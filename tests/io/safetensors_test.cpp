#include "pelab/io/safetensors.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "error_message.h"
#include "pelab/core/error.h"
#include "pelab/io/atomic_file.h"
#include "pelab_process.h"

namespace pelab {
namespace {

namespace fs = std::filesystem;
using testing::error_message;
using testing::TempDir;
using json = nlohmann::json;

const std::string kFixture =
    std::string(PELAB_SOURCE_DIR) + "/tests/fixtures/model/none_pre.safetensors";
const std::string kSource = "bad.safetensors";

// A scratch directory removed at the end of the test.
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

std::string le64(uint64_t n) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out;
}

// A safetensors image: the header text as given (no padding) and `data_bytes` zero bytes.
std::string image(const std::string& header, size_t data_bytes = 0) {
  return le64(header.size()) + header + std::string(data_bytes, '\0');
}

// Reading `bytes` throws one line that names the file and contains every `part`.
void expect_read_error(const std::string& bytes, std::initializer_list<std::string> parts) {
  EXPECT_THROW(read_safetensors_bytes(bytes, kSource), Error);
  const std::string message = error_message([&] { read_safetensors_bytes(bytes, kSource); });
  EXPECT_EQ(message.rfind(kSource + ": ", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  }
}

// A header with entries; each entry given as its JSON text.
std::string header(std::initializer_list<std::pair<std::string, std::string>> entries) {
  std::string h = "{";
  for (const auto& [name, body] : entries) {
    if (h.size() > 1) h += ",";
    h += json(name).dump() + ":" + body;
  }
  return h + "}";
}

std::string f32_entry(const std::string& shape, uint64_t begin, uint64_t end) {
  return fmt::format(R"({{"dtype":"F32","shape":{},"data_offsets":[{},{}]}})", shape, begin, end);
}

SafetensorsTensor f32(const std::string& name, Shape shape, std::vector<float> values) {
  SafetensorsTensor t;
  t.name = name;
  t.dtype = "F32";
  t.shape = std::move(shape);
  t.f32 = std::move(values);
  return t;
}

SafetensorsTensor i64(const std::string& name, Shape shape, std::vector<int64_t> values) {
  SafetensorsTensor t;
  t.name = name;
  t.dtype = "I64";
  t.shape = std::move(shape);
  t.i64 = std::move(values);
  return t;
}

// ---- round trips ----------------------------------------------------------------------------

TEST(Safetensors, RoundTripF32I64MetadataEmptyAndScalar) {
  TempDir dir;
  const std::string path = dir / "ckpt.safetensors";
  const std::map<std::string, std::string> metadata = {
      {"step", "12"}, {"note", "line one\nline \"two\" ü"}, {"empty", ""}};
  const std::vector<SafetensorsTensor> tensors = {
      f32("w", {2, 3}, {1.5f, -2.0f, 0.0f, 3.25f, std::numeric_limits<float>::infinity(), -0.0f}),
      i64("ids", {4},
          {0, -1, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}),
      f32("empty", {0, 3}, {}),
      i64("empty_ids", {5, 0}, {}),
      f32("loss", {}, {0.75f}),
  };
  write_safetensors(path, metadata, tensors);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"ckpt.safetensors"});

  const SafetensorsFile file = read_safetensors(path);
  EXPECT_EQ(file.source, path);
  EXPECT_EQ(file.metadata, metadata);
  ASSERT_EQ(file.tensors.size(), 5u);
  // Sorted by name.
  std::vector<std::string> names;
  for (const auto& t : file.tensors) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"empty", "empty_ids", "ids", "loss", "w"}));
  for (const SafetensorsTensor& expected : tensors) {
    const SafetensorsTensor* got = file.find(expected.name);
    ASSERT_NE(got, nullptr) << expected.name;
    EXPECT_EQ(got->dtype, expected.dtype);
    EXPECT_EQ(got->shape, expected.shape);
    EXPECT_EQ(got->i64, expected.i64);
    ASSERT_EQ(got->f32.size(), expected.f32.size());
    for (size_t i = 0; i < got->f32.size(); ++i) {
      EXPECT_EQ(std::memcmp(&got->f32[i], &expected.f32[i], 4), 0) << expected.name << i;
    }
  }
  EXPECT_EQ(file.find("nope"), nullptr);

  const Tensor loss = file.tensor("loss");
  EXPECT_EQ(loss.shape(), Shape{});
  EXPECT_EQ(loss.item(), 0.75f);
  const Tensor w = file.tensor("w");
  EXPECT_EQ(w.shape(), (Shape{2, 3}));
  EXPECT_EQ(w.at({1, 0}), 3.25f);
  EXPECT_EQ(file.tensor("empty").numel(), 0);
  EXPECT_EQ(file.int_tensor("empty_ids").shape, (Shape{5, 0}));
  EXPECT_EQ(file.metadata_value("step"), "12");

  // Writing the same content again gives the same bytes (deterministic layout).
  const std::string first = slurp(path);
  write_safetensors(dir / "again.safetensors", file.metadata, file.tensors);
  EXPECT_EQ(slurp(dir / "again.safetensors"), first);
}

TEST(Safetensors, WriterAddsTensorsAndIntTensors) {
  TempDir dir;
  const Tensor w = Tensor::from_vector({2, 2}, {1, 2, 3, 4});
  const IntTensor ids({2, 3}, {0, 1, 2, -1, 5, 6});
  SafetensorsWriter writer;
  writer.add("w.t", w.transpose(0, 1)).add("ids", ids).set_metadata("case", "x");
  writer.write(dir / "m.safetensors");

  const SafetensorsFile file = read_safetensors(dir / "m.safetensors");
  EXPECT_EQ(file.find("ids")->dtype, "I64");
  const IntTensor back = file.int_tensor("ids");
  EXPECT_EQ(back.shape, ids.shape);
  EXPECT_EQ(back.values, ids.values);
  EXPECT_EQ(file.tensor("w.t").to_vector(), (std::vector<float>{1, 3, 2, 4}));  // contiguous
  EXPECT_EQ(file.metadata_value("case"), "x");
  EXPECT_EQ(writer.bytes(), slurp(dir / "m.safetensors"));

  const std::string dup = error_message([&] { writer.add("ids", ids); });
  EXPECT_NE(dup.find("'ids' was already added"), std::string::npos) << dup;
}

TEST(Safetensors, AccessorsNameTheCulprit) {
  const SafetensorsFile file = read_safetensors_bytes(
      safetensors_bytes({}, {f32("w", {1}, {1.0f}), i64("big", {3}, {1, 3000000000LL, 2})}),
      "m.safetensors");
  std::string m = error_message([&] { file.tensor("absent"); });
  EXPECT_NE(m.find("m.safetensors: no tensor 'absent'"), std::string::npos) << m;
  m = error_message([&] { file.tensor("big"); });
  EXPECT_NE(m.find("m.safetensors: tensor 'big' is I64, expected F32"), std::string::npos) << m;
  m = error_message([&] { file.int_tensor("w"); });
  EXPECT_NE(m.find("tensor 'w' is F32, expected I64"), std::string::npos) << m;
  m = error_message([&] { file.int_tensor("big"); });
  EXPECT_NE(m.find("'big' holds 3000000000 at flat index 1, which does not fit in int32"),
            std::string::npos)
      << m;
  m = error_message([&] { file.metadata_value("k"); });
  EXPECT_NE(m.find("no __metadata__ entry 'k'"), std::string::npos) << m;
}

// ---- the committed fixtures ------------------------------------------------------------------

TEST(Safetensors, ReadsModelFixture) {
  const SafetensorsFile file = read_safetensors(kFixture);
  EXPECT_EQ(file.metadata_value("case"), "none_pre");
  EXPECT_EQ(file.metadata_value("generator"), "tools/make_model_fixtures.py");
  EXPECT_NE(file.metadata_value("config").find("type: none"), std::string::npos);

  const SafetensorsTensor* embed = file.find("embed.weight");
  ASSERT_NE(embed, nullptr);
  EXPECT_EQ(embed->dtype, "F32");
  EXPECT_EQ(embed->shape, (Shape{7, 8}));
  EXPECT_EQ(file.tensor("head.weight").shape(), (Shape{5, 8}));
  EXPECT_EQ(file.tensor("layers.1.ffn.fc1.weight").numel(), 8 * 32);
  EXPECT_EQ(file.tensor("output.logits").shape(), (Shape{3, 7, 5}));
  const Tensor loss = file.tensor("output.loss");
  EXPECT_EQ(loss.shape(), Shape{});
  EXPECT_TRUE(std::isfinite(loss.item()) && loss.item() > 0.0f);

  EXPECT_EQ(file.find("input.tokens")->dtype, "I64");
  const IntTensor tokens = file.int_tensor("input.tokens");
  EXPECT_EQ(tokens.shape, (Shape{3, 7}));
  for (const int32_t t : tokens.values) EXPECT_TRUE(t >= 0 && t < 7) << t;
  const IntTensor mask = file.int_tensor("input.key_mask");
  int real = 0;
  for (const int32_t m : mask.values) real += m;
  EXPECT_EQ(real, 7 + 4 + 1);
  const IntTensor targets = file.int_tensor("input.targets");
  EXPECT_EQ(targets.values[7 + 6], -1);  // a padded slot of row 1
}

TEST(Safetensors, ReadsEveryModelFixture) {
  int count = 0;
  for (const auto& e :
       fs::directory_iterator(fs::path(PELAB_SOURCE_DIR) / "tests/fixtures/model")) {
    if (e.path().extension() != ".safetensors") continue;
    const SafetensorsFile file = read_safetensors(e.path().string());
    EXPECT_EQ(file.metadata_value("case"), e.path().stem().string());
    EXPECT_NE(file.find("output.loss"), nullptr);
    ++count;
  }
  EXPECT_GT(count, 20);
}

// ---- byte compatibility
// --------------------------------------------------------------------------

TEST(Safetensors, WrittenHeaderFollowsTheFormat) {
  const std::string bytes = safetensors_bytes(
      {{"k", "v"}}, {f32("b", {2}, {1.0f, 2.0f}), i64("a", {1, 2}, {7, -8}), f32("c", {}, {0.5f})});
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  ASSERT_LE(8 + n, bytes.size());
  const std::string text = bytes.substr(8, n);
  const size_t last = text.find_last_not_of(' ');
  EXPECT_EQ(text[last], '}');
  EXPECT_LT(n - (last + 1), 8u);  // padding only up to the next multiple of 8
  const json h = json::parse(text);
  EXPECT_EQ(h["__metadata__"], (json{{"k", "v"}}));
  // Packed in name order: a, b, c.
  EXPECT_EQ(h["a"], (json{{"dtype", "I64"}, {"shape", {1, 2}}, {"data_offsets", {0, 16}}}));
  EXPECT_EQ(h["b"], (json{{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {16, 24}}}));
  EXPECT_EQ(h["c"], (json{{"dtype", "F32"}, {"shape", json::array()}, {"data_offsets", {24, 28}}}));
  EXPECT_EQ(h.size(), 4u);
  ASSERT_EQ(bytes.size(), 8 + n + 28);
  const char* data = bytes.data() + 8 + n;
  int64_t a1 = 0;
  float b0 = 0, c = 0;
  std::memcpy(&a1, data + 8, 8);
  std::memcpy(&b0, data + 16, 4);
  std::memcpy(&c, data + 24, 4);
  EXPECT_EQ(a1, -8);
  EXPECT_EQ(b0, 1.0f);
  EXPECT_EQ(c, 0.5f);
  // Little-endian on disk.
  EXPECT_EQ(static_cast<unsigned char>(data[8]), 0xF8);

  // No metadata: no "__metadata__" key.
  const std::string plain = safetensors_bytes({}, {f32("x", {1}, {1.0f})});
  EXPECT_EQ(plain.find("__metadata__"), std::string::npos);
}

TEST(Safetensors, RewritingAFixtureIsByteIdentical) {
  // The Python generator writes the same standard layout (sorted keys, compact JSON,
  // space padding, tensors in name order), so re-encoding must reproduce the file.
  const SafetensorsFile file = read_safetensors(kFixture);
  EXPECT_EQ(safetensors_bytes(file.metadata, file.tensors), slurp(kFixture));
}

TEST(Safetensors, WriterRejectsBadTensors) {
  std::string m = error_message([] {
    safetensors_bytes({}, {f32("a", {1}, {1}), f32("a", {1}, {2})});
  });
  EXPECT_NE(m.find("tensor name 'a' appears twice"), std::string::npos) << m;
  m = error_message([] { safetensors_bytes({}, {f32("w", {2, 2}, {1, 2, 3})}); });
  EXPECT_NE(m.find("'w' is F32 [2, 2] (4 values) but holds 3 F32 values"), std::string::npos) << m;
  m = error_message([] {
    SafetensorsTensor t = f32("h", {1}, {1});
    t.dtype = "F16";
    safetensors_bytes({}, {t});
  });
  EXPECT_NE(m.find("unsupported dtype 'F16' for 'h'"), std::string::npos) << m;
  m = error_message([] { safetensors_bytes({}, {f32("n", {-1}, {})}); });
  EXPECT_NE(m.find("'n' has shape [-1]"), std::string::npos) << m;
  m = error_message([] { safetensors_bytes({}, {f32("__metadata__", {}, {1})}); });
  EXPECT_NE(m.find("reserved"), std::string::npos) << m;
  m = error_message([] { safetensors_bytes({{"k", "\xff"}}, {}); });
  EXPECT_NE(m.find("__metadata__ entry 'k'"), std::string::npos) << m;

  TempDir dir;
  m = error_message([&] {
    write_safetensors(dir / "x.safetensors", {}, {f32("a", {1}, {}), f32("a", {1}, {})});
  });
  EXPECT_NE(m.find(dir / "x.safetensors"), std::string::npos) << m;
  EXPECT_TRUE(dir.entries().empty());
}

// ---- malformed input -------------------------------------------------------------------------

TEST(SafetensorsMalformed, MissingOrUnreadableFile) {
  TempDir dir;
  const std::string missing = dir / "missing.safetensors";
  EXPECT_THROW(read_safetensors(missing), Error);
  std::string m = error_message([&] { read_safetensors(missing); });
  EXPECT_NE(m.find(missing + ": cannot open"), std::string::npos) << m;
  EXPECT_NE(m.find("No such file or directory"), std::string::npos) << m;

  m = error_message([&] { read_safetensors(dir.path().string()); });
  EXPECT_NE(m.find(dir.path().string() + ": is not a regular file"), std::string::npos) << m;

  spit(dir / "short.safetensors", "abc");
  m = error_message([&] { read_safetensors(dir / "short.safetensors"); });
  EXPECT_NE(m.find(dir / "short.safetensors"), std::string::npos) << m;
  EXPECT_NE(m.find("file is 3 bytes, shorter than the 8-byte header length"), std::string::npos)
      << m;
}

TEST(SafetensorsMalformed, ShorterThanEightBytes) {
  expect_read_error("", {"file is 0 bytes, shorter than the 8-byte"});
  expect_read_error("1234567", {"file is 7 bytes"});
}

TEST(SafetensorsMalformed, HeaderLengthBeyondTheFile) {
  std::string bytes = le64(9999999999ULL);
  bytes.append(1226, ' ');
  expect_read_error(bytes, {"header length 9999999999 exceeds the file size 1234"});
  expect_read_error(le64(std::numeric_limits<uint64_t>::max()),
                    {"header length 18446744073709551615 exceeds the file size 8"});
  expect_read_error(le64(3) + "{}", {"header length 3 exceeds the file size 10"});
}

TEST(SafetensorsMalformed, HeaderLengthBeyondTheCap) {
  std::string bytes = le64(100'000'001);
  bytes.append(100'000'008, ' ');
  expect_read_error(bytes, {"header length 100000001 exceeds the 100000000-byte limit"});
}

TEST(SafetensorsMalformed, EmptyHeader) {
  expect_read_error(le64(0), {"header is empty"});
}

TEST(SafetensorsMalformed, HeaderNotUtf8) {
  expect_read_error(image("{\"\xff\":1}"), {"not valid UTF-8", "0xff", "header offset 2"});
  expect_read_error(image("{\"\xc0\xaf\":1}"), {"not valid UTF-8", "0xc0"});           // overlong
  expect_read_error(image("{\"\xed\xa0\x80\":1}"), {"not valid UTF-8", "0xed"});       // surrogate
  expect_read_error(image("{\"\xe2\x82\"}"), {"not valid UTF-8", "header offset 2"});  // truncated
}

TEST(SafetensorsMalformed, HeaderNotJson) {
  expect_read_error(image("{\"a\": "), {"header is not valid JSON", "expected a JSON object"});
  expect_read_error(image("{} x"), {"header is not valid JSON"});
  expect_read_error(image(std::string("{}\0\0\0\0\0\0", 8)),
                    {"header is not valid JSON (a NUL byte at header offset 2)"});
  expect_read_error(image(std::string("{}\0{\"a\":", 8)), {"a NUL byte at header offset 2"});
  expect_read_error(image("{\"a\":1,}"), {"header is not valid JSON"});
  expect_read_error(image("{/*c*/}"), {"header is not valid JSON"});
  expect_read_error(image("{\"a\n\":1}"), {"header is not valid JSON"});  // raw control char
}

TEST(SafetensorsMalformed, HeaderNotAnObject) {
  expect_read_error(image("[1, 2]"), {"header is an array, expected a JSON object"});
  expect_read_error(image("\"x\""), {"header is a string, expected a JSON object"});
  expect_read_error(image("  null"), {"header is null, expected a JSON object"});
  // A huge root array is rejected at its first byte, not after building it.
  expect_read_error(image(std::string(1'000'000, '[')), {"header is an array"});
}

TEST(SafetensorsMalformed, EntryNotAnObject) {
  expect_read_error(image(header({{"w", "[0, 4]"}})),
                    {"entry 'w' is '[0,4]', expected an object with \"dtype\""});
  expect_read_error(image(header({{"w", "\"F32\""}})), {"entry 'w' is the string 'F32'"});
}

TEST(SafetensorsMalformed, EntryLacksAField) {
  expect_read_error(image(header({{"w", R"({"shape":[1],"data_offsets":[0,4]})"}}), 4),
                    {"tensor 'w' lacks \"dtype\""});
  expect_read_error(image(header({{"w", R"({"dtype":"F32","data_offsets":[0,4]})"}}), 4),
                    {"tensor 'w' lacks \"shape\""});
  expect_read_error(image(header({{"w", R"({"dtype":"F32","shape":[1]})"}}), 4),
                    {"tensor 'w' lacks \"data_offsets\""});
  expect_read_error(image(header({{"w", R"({"dtype":32,"shape":[1],"data_offsets":[0,4]})"}}), 4),
                    {"dtype of 'w' is 32, expected a string"});
}

TEST(SafetensorsMalformed, UnsupportedDtype) {
  expect_read_error(
      image(header({{"w", R"({"dtype":"F16","shape":[2],"data_offsets":[0,4]})"}}), 4),
      {"unsupported dtype 'F16' for 'w' (pelab reads F32 and I64)"});
}

TEST(SafetensorsMalformed, BadShapeEntries) {
  expect_read_error(image(header({{"w", f32_entry("[2, -1]", 0, 4)}}), 4),
                    {"shape of 'w' has -1 at index 1; dimensions must be non-negative integers"});
  expect_read_error(image(header({{"w", f32_entry("[1.5]", 0, 4)}}), 4),
                    {"shape of 'w' has 1.5 at index 0"});
  expect_read_error(image(header({{"w", f32_entry("[1.0]", 0, 4)}}), 4),
                    {"shape of 'w' has 1.0 at index 0"});
  expect_read_error(image(header({{"w", f32_entry("[\"2\"]", 0, 4)}}), 4),
                    {"shape of 'w' has the string '2' at index 0"});
  expect_read_error(image(header({{"w", f32_entry("[9223372036854775808]", 0, 4)}}), 4),
                    {"shape of 'w' has 9223372036854775808 at index 0"});
  expect_read_error(image(header({{"w", f32_entry("[1e400]", 0, 4)}}), 4),
                    {"not valid JSON", "number overflow parsing '1e400'"});
  expect_read_error(image(header({{"w", f32_entry("4", 0, 4)}}), 4),
                    {"shape of 'w' is 4, expected an array of non-negative integers"});
}

TEST(SafetensorsMalformed, ShapeElementCountOverflows) {
  expect_read_error(image(header({{"w", f32_entry("[4294967296, 4294967296]", 0, 0)}})),
                    {"shape [4294967296, 4294967296] of 'w' has too many elements"});
  // A zero dimension does not excuse the others.
  expect_read_error(image(header({{"w", f32_entry("[0, 4294967296, 4294967296]", 0, 0)}})),
                    {"of 'w' has too many elements"});
  // Just below the limit for F32 elements: the size check then fails, not the product.
  expect_read_error(image(header({{"w", f32_entry("[2305843009213693951]", 0, 0)}})),
                    {"needs 9223372036854775804 bytes"});
}

TEST(SafetensorsMalformed, BadDataOffsets) {
  expect_read_error(image(header({{"w", R"({"dtype":"F32","shape":[1],"data_offsets":[0]})"}}), 4),
                    {"data_offsets of 'w' is '[0]', expected [begin, end]"});
  expect_read_error(
      image(header({{"w", R"({"dtype":"F32","shape":[1],"data_offsets":[-4,0]})"}}), 4),
      {"data_offsets of 'w' is '[-4,0]'"});
  expect_read_error(
      image(header({{"w", R"({"dtype":"F32","shape":[1],"data_offsets":[0,4.0]})"}}), 4),
      {"data_offsets of 'w'"});
  expect_read_error(image(header({{"w", f32_entry("[1]", 8, 4)}}), 8),
                    {"tensor 'w' has data_offsets [8, 4] out of order"});
  expect_read_error(image(header({{"w", f32_entry("[1]", 4, 8)}}), 4),
                    {"tensor 'w' has data_offsets [4, 8] beyond the data region of 4 bytes"});
  expect_read_error(image(header({{"w", f32_entry("[1]", 0, 18446744073709551615ULL)}}), 4),
                    {"beyond the data region"});
  expect_read_error(image(header({{"x", f32_entry("[2, 2]", 0, 12)}}), 12),
                    {"tensor 'x' has data_offsets [0, 12] but F32 [2, 2] needs 16 bytes"});
  expect_read_error(
      image(header({{"i", R"({"dtype":"I64","shape":[2],"data_offsets":[0,8]})"}}), 8),
      {"tensor 'i' has data_offsets [0, 8] but I64 [2] needs 16 bytes"});
}

TEST(SafetensorsMalformed, OverlappingTensors) {
  expect_read_error(
      image(header({{"a", f32_entry("[2]", 0, 8)}, {"b", f32_entry("[2]", 4, 12)}}), 12),
      {"tensors 'a' [0, 8] and 'b' [4, 12] overlap"});
  expect_read_error(
      image(header({{"a", f32_entry("[2]", 0, 8)}, {"b", f32_entry("[2]", 0, 8)}}), 8),
      {"tensors 'a' [0, 8] and 'b' [0, 8] overlap"});
  // An empty tensor inside another one.
  expect_read_error(
      image(header({{"a", f32_entry("[2]", 0, 8)}, {"e", f32_entry("[0]", 4, 4)}}), 8),
      {"tensors 'a' [0, 8] and 'e' [4, 4] overlap"});
}

TEST(SafetensorsMalformed, UncoveredBytes) {
  expect_read_error(
      image(header({{"a", f32_entry("[1]", 0, 4)}, {"b", f32_entry("[1]", 8, 12)}}), 12),
      {"bytes [4, 8) of the data region belong to no tensor (between 'a' and 'b')"});
  expect_read_error(image(header({{"a", f32_entry("[1]", 4, 8)}}), 8),
                    {"bytes [0, 4) of the data region belong to no tensor (between the start"});
  expect_read_error(image(header({{"a", f32_entry("[1]", 0, 4)}}), 9),
                    {"bytes [4, 9) at the end of the data region belong to no tensor"});
  expect_read_error(image("{}", 1), {"bytes [0, 1) at the end of the data region"});
  // Empty tensors at the boundaries are fine.
  const SafetensorsFile ok =
      read_safetensors_bytes(image(header({{"a", f32_entry("[1]", 0, 4)},
                                           {"e", f32_entry("[0]", 4, 4)},
                                           {"z", f32_entry("[0, 2]", 0, 0)}}),
                                   4),
                             kSource);
  EXPECT_EQ(ok.tensors.size(), 3u);
}

TEST(SafetensorsMalformed, DuplicateNames) {
  const std::string a = f32_entry("[1]", 0, 4);
  const std::string b = f32_entry("[1]", 4, 8);
  expect_read_error(image("{\"a\":" + a + ",\"a\":" + b + "}", 8),
                    {"tensor name 'a' appears twice in the header"});
  expect_read_error(
      image(R"({"a":{"dtype":"F32","dtype":"I64","shape":[1],"data_offsets":[0,4]}})", 4),
      {"key 'dtype' appears twice in 'a'"});
  expect_read_error(image(R"({"__metadata__":{},"__metadata__":{}})"),
                    {"'__metadata__' appears twice"});
  expect_read_error(image(R"({"__metadata__":{"k":"1","k":"2"}})"),
                    {"key 'k' appears twice in '__metadata__'"});
}

TEST(SafetensorsMalformed, MetadataNotStrings) {
  expect_read_error(image(R"({"__metadata__":{"step":12}})"),
                    {"__metadata__ value for 'step' is 12; metadata values must be strings"});
  expect_read_error(image(R"({"__metadata__":{"x":{"y":"z"}}})"),
                    {"__metadata__ value for 'x' is an object"});
  expect_read_error(image(R"({"__metadata__":["a"]})"),
                    {"__metadata__ is '[\"a\"]', expected an object of strings"});
}

TEST(SafetensorsMalformed, NestingAndArraySizeAreBounded) {
  expect_read_error(image(header({{"w", f32_entry("[[1]]", 0, 4)}}), 4),
                    {"header nests too deeply at 'w'.'shape'[0]"});
  expect_read_error(image("{\"w\":{\"shape\":" + std::string(1'000'000, '[')),
                    {"header nests too deeply"});
  std::string long_shape = "[1";
  for (int i = 0; i < 1000; ++i) long_shape += ",1";
  expect_read_error(image(header({{"w", f32_entry(long_shape + "]", 0, 4)}}), 4),
                    {"array 'w'.'shape' has more than 64 elements"});
}

TEST(SafetensorsMalformed, HostileNamesStayOnOneLine) {
  expect_read_error(image(header({{"a\nb'c", "1"}})), {"entry 'a\\x0ab\\'c' is 1"});
  const std::string long_name(10'000, 'n');
  const std::string m = error_message([&] {
    read_safetensors_bytes(image(header({{long_name, "1"}})), kSource);
  });
  EXPECT_LT(m.size(), 400u) << m;
  EXPECT_NE(m.find("(cut, 10000 bytes)"), std::string::npos) << m;
}

// Random corruption of a valid file either parses or throws pelab::Error; never crashes
// (run under the sanitizer build to catch out-of-bounds reads).
TEST(SafetensorsMalformed, CorruptedFilesFailCleanly) {
  const std::string valid = safetensors_bytes(
      {{"k", "v"}}, {f32("a", {2, 2}, {1, 2, 3, 4}), i64("b", {3}, {1, 2, 3}), f32("c", {}, {1})});
  for (size_t n = 0; n < valid.size(); ++n) {
    EXPECT_THROW(read_safetensors_bytes(valid.substr(0, n), kSource), Error) << n;
  }
  std::mt19937 rng(1234);
  int parsed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string bytes = valid;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      const size_t at = rng() % bytes.size();
      switch (rng() % 3) {
        case 0:
          bytes[at] = static_cast<char>(rng());
          break;
        case 1:
          bytes[at] = "0123456789[]{},:\"-.e "[rng() % 21];
          break;
        default:
          bytes.erase(at, 1);
      }
    }
    try {
      read_safetensors_bytes(bytes, kSource);
      ++parsed;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  EXPECT_LT(parsed, 3000);
}

// ---- atomic writes ---------------------------------------------------------------------------

TEST(AtomicFile, ReplacesContentAndLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir / "out.txt";
  write_file_atomic(path, "old");
  EXPECT_EQ(slurp(path), "old");
  write_file_atomic(path, std::string("new\0content", 11));
  EXPECT_EQ(slurp(path), std::string("new\0content", 11));
  write_file_atomic(path, "");
  EXPECT_EQ(slurp(path), "");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.txt"});
  EXPECT_EQ(atomic_temp_path(path), path + ".tmp-" + std::to_string(::getpid()));
}

TEST(AtomicFile, FailedTemporaryCreationLeavesOldFile) {
  TempDir dir;
  const std::string path = dir / "model.safetensors";
  write_safetensors(path, {}, {f32("w", {1}, {1.0f})});
  const std::string before = slurp(path);
  // A name clash: a directory sits where the temporary would go.
  fs::create_directory(atomic_temp_path(path));
  const std::string m =
      error_message([&] { write_safetensors(path, {}, {f32("w", {1}, {2.0f})}); });
  EXPECT_NE(m.find(path + ": cannot write the file"), std::string::npos) << m;
  EXPECT_NE(m.find("Is a directory"), std::string::npos) << m;
  EXPECT_EQ(slurp(path), before);
  fs::remove(atomic_temp_path(path));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.safetensors"});
}

TEST(AtomicFile, AFifoAtTheTemporaryNameIsRefusedNotWaitedOn) {
  TempDir dir;
  const std::string path = dir / "out.txt";
  write_file_atomic(path, "old");
  ASSERT_EQ(::mkfifo(atomic_temp_path(path).c_str(), 0644), 0);
  const std::string m = error_message([&] { write_file_atomic(path, "new"); });
  EXPECT_NE(m.find(path + ": cannot write the file"), std::string::npos) << m;
  EXPECT_EQ(slurp(path), "old");
  fs::remove(atomic_temp_path(path));
}

TEST(AtomicFile, FailedRenameRemovesTheTemporary) {
  TempDir dir;
  // The target is a non-empty directory: the rename fails after the temporary was written.
  const std::string path = dir / "taken";
  fs::create_directory(path);
  spit(path + "/keep.txt", "keep");
  const std::string m = error_message([&] { write_file_atomic(path, "data"); });
  EXPECT_NE(m.find(path + ": cannot write the file: renaming"), std::string::npos) << m;
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"taken"});
  EXPECT_EQ(slurp(path + "/keep.txt"), "keep");
}

TEST(AtomicFile, MissingDirectoryNamesPathAndErrno) {
  TempDir dir;
  const std::string path = dir / "no/such/dir/file.txt";
  const std::string m = error_message([&] { write_file_atomic(path, "x"); });
  EXPECT_NE(m.find(path + ": cannot write the file"), std::string::npos) << m;
  EXPECT_NE(m.find("No such file or directory"), std::string::npos) << m;
  EXPECT_TRUE(dir.entries().empty());
}

TEST(AtomicFile, BareFileNameUsesTheCurrentDirectory) {
  TempDir dir;
  const fs::path old = fs::current_path();
  fs::current_path(dir.path());
  write_file_atomic("bare.txt", "x");
  fs::current_path(old);
  EXPECT_EQ(slurp(dir / "bare.txt"), "x");
}

}  // namespace
}  // namespace pelab
