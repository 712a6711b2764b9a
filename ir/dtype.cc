#include "ir/dtype.h"

#include <array>
#include <cstdint>
#include <iterator>

namespace cds::ir {

std::string_view DataTypeName(DataType dt) {
  // Indexed by DataType.
  static constexpr std::string_view kNames[] = {"BOOL",  "INT8",   "INT16",  "INT32",  "INT64",
                                                "UINT8", "UINT16", "UINT32", "UINT64", "FP16",
                                                "BF16",  "FP32",   "FP64",   "INDEX"};
  static_assert(std::size(kNames) == std::size(kAllDataTypes));
  const auto i = static_cast<size_t>(dt);
  return i < std::size(kNames) ? kNames[i] : "?";
}

namespace {

// The parser looks up a dtype name for every `pl.X` it meets (28k times per MB of
// host code): names fit in 8 bytes, so each is compared as one integer.
constexpr size_t kPackedNameMax = 8;
uint64_t PackName(std::string_view s) {
  uint64_t v = 0;
  for (size_t i = 0; i < s.size(); ++i) v |= uint64_t{static_cast<uint8_t>(s[i])} << (8 * i);
  return v;
}

}  // namespace

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
  switch (dt) {
    case DataType::kBool:
    case DataType::kInt8:
    case DataType::kUInt8: return 1;
    case DataType::kInt16:
    case DataType::kUInt16:
    case DataType::kFP16:
    case DataType::kBF16: return 2;
    case DataType::kInt32:
    case DataType::kUInt32:
    case DataType::kFP32: return 4;
    case DataType::kInt64:
    case DataType::kUInt64:
    case DataType::kFP64:
    case DataType::kIndex: return 8;
  }
  return 0;
}

bool IsFloat(DataType dt) {
  return dt == DataType::kFP16 || dt == DataType::kBF16 || dt == DataType::kFP32 ||
         dt == DataType::kFP64;
}

bool IsInteger(DataType dt) { return !IsFloat(dt) && dt != DataType::kBool; }

}  // namespace cds::ir
