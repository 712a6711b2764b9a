#include "verifier/contract.h"

namespace cds::verify {

std::string_view ContractName(Contract contract) {
  switch (contract) {
    case Contract::kStrict:
      return "strict";
    case Contract::kPypto:
      return "pypto";
  }
  return "strict";
}

std::optional<Contract> ContractFromName(std::string_view name) {
  for (Contract c : {Contract::kStrict, Contract::kPypto}) {
    if (ContractName(c) == name) return c;
  }
  return std::nullopt;
}

std::string_view ContractNames() { return "strict, pypto"; }

}  // namespace cds::verify
