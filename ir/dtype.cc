#include "ir/dtype.h"

#include <array>
#include <cstdint>
#include <iterator>

namespace cds::ir {

namespace {

// Indexed by DataType.
struct DataTypeInfo {
  std::string_view name;
  int64_t bytes;
};
constexpr DataTypeInfo kInfo[] = {{"BOOL", 1},   {"INT8", 1},  {"INT16", 2},  {"INT32", 4},
                                  {"INT64", 8},  {"UINT8", 1}, {"UINT16", 2}, {"UINT32", 4},
                                  {"UINT64", 8}, {"FP16", 2},  {"BF16", 2},   {"FP32", 4},
                                  {"FP64", 8},   {"INDEX", 8}};
static_assert(std::size(kInfo) == std::size(kAllDataTypes));

// The parser looks up a dtype name for every `pl.X` it meets (28k times per MB of
// host code): names fit in 8 bytes, so each is compared as one integer.
constexpr size_t kPackedNameMax = 8;
uint64_t PackName(std::string_view s) {
  uint64_t v = 0;
  for (size_t i = 0; i < s.size(); ++i) v |= uint64_t{static_cast<uint8_t>(s[i])} << (8 * i);
  return v;
}

}  // namespace

std::string_view DataTypeName(DataType dt) {
  const auto i = static_cast<size_t>(dt);
  return i < std::size(kInfo) ? kInfo[i].name : "?";
}

std::optional<DataType> DataTypeFromName(std::string_view name) {
  struct Packed {
    uint64_t chars;
    size_t size;  // "FP32" and "FP32\0" pack alike
  };
  static const auto packed = [] {
    std::array<Packed, std::size(kAllDataTypes)> t{};
    for (size_t i = 0; i < t.size(); ++i) {
      const std::string_view n = DataTypeName(kAllDataTypes[i]);
      t[i] = {PackName(n), n.size()};
    }
    return t;
  }();
  if (name.empty() || name.size() > kPackedNameMax) return std::nullopt;
  const uint64_t key = PackName(name);
  for (size_t i = 0; i < packed.size(); ++i) {
    if (packed[i].chars == key && packed[i].size == name.size()) return kAllDataTypes[i];
  }
  return std::nullopt;
}

int64_t DataTypeBytes(DataType dt) {
  const auto i = static_cast<size_t>(dt);
  return i < std::size(kInfo) ? kInfo[i].bytes : 0;
}

bool IsFloat(DataType dt) {
  return dt == DataType::kFP16 || dt == DataType::kBF16 || dt == DataType::kFP32 ||
         dt == DataType::kFP64;
}

bool IsInteger(DataType dt) { return !IsFloat(dt) && dt != DataType::kBool; }

}  // namespace cds::ir
