#pragma once

// What the verified program promises. kStrict is the reference pass's output: every
// check as documented. kPypto is what PyPTO's own pipeline promises right after its
// MaterializeCommDomainScopes, which is less in two places (docs/verifier.md has
// the table): an in-place collective's result may still lack its WindowBuffer,
// and an op Call's type may lack the back-reference its Var has (a warning).

#include <optional>
#include <string_view>

namespace cds::verify {

enum class Contract { kStrict, kPypto };

// "strict", "pypto".
std::string_view ContractName(Contract contract);
// nullopt for an unknown name.
std::optional<Contract> ContractFromName(std::string_view name);
// "strict, pypto", for a command line's help and its error message.
std::string_view ContractNames();

}  // namespace cds::verify
