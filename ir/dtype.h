#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cds::ir {

enum class DataType : uint8_t {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFP16,
  kBF16,
  kFP32,
  kFP64,
  kIndex,
};

inline constexpr DataType kAllDataTypes[] = {
    DataType::kBool,  DataType::kInt8,   DataType::kInt16,  DataType::kInt32,  DataType::kInt64,
    DataType::kUInt8, DataType::kUInt16, DataType::kUInt32, DataType::kUInt64, DataType::kFP16,
    DataType::kBF16,  DataType::kFP32,   DataType::kFP64,   DataType::kIndex};

// Name as spelled in the DSL after "pl.": "FP32", "INDEX", ...
std::string_view DataTypeName(DataType dt);
std::optional<DataType> DataTypeFromName(std::string_view name);
// Byte size as PyPTO reports it (pl.FP32.get_byte() == 4, INDEX == 8, BOOL == 1).
int64_t DataTypeBytes(DataType dt);
bool IsFloat(DataType dt);
bool IsInteger(DataType dt);  // signed, unsigned and INDEX

}  // namespace cds::ir
