#include "ir/dtype.h"

namespace cds::ir {

std::string_view DataTypeName(DataType dt) {
  switch (dt) {
    case DataType::kBool: return "BOOL";
    case DataType::kInt8: return "INT8";
    case DataType::kInt16: return "INT16";
    case DataType::kInt32: return "INT32";
    case DataType::kInt64: return "INT64";
    case DataType::kUInt8: return "UINT8";
    case DataType::kUInt16: return "UINT16";
    case DataType::kUInt32: return "UINT32";
    case DataType::kUInt64: return "UINT64";
    case DataType::kFP16: return "FP16";
    case DataType::kBF16: return "BF16";
    case DataType::kFP32: return "FP32";
    case DataType::kFP64: return "FP64";
    case DataType::kIndex: return "INDEX";
  }
  return "?";
}

std::optional<DataType> DataTypeFromName(std::string_view name) {
  for (DataType dt : kAllDataTypes) {
    if (DataTypeName(dt) == name) return dt;
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
