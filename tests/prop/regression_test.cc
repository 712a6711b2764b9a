// Fixed cases for bugs the properties found (one TEST per bug; see
// docs/properties.md, "Bugs found").

#include <gtest/gtest.h>

namespace cds::prop {
namespace {

}  // namespace
}  // namespace cds::prop
