// RapidCheck properties of StructuralEqual / StructuralHash over random
// well-formed IR (tests/ir/ir_gen.h).
//
// Budget: each property runs 500 x CDS_PROP_SCALE cases (env, default 1), set
// programmatically because RC_PARAMS is one global setting for the whole binary.
// An explicit RC_PARAMS="max_success=N" overrides the count; RC_PARAMS seeds and
// `reproduce=` strings work as usual.

#include <cstdlib>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "ir/structural_equal.h"
#include "ir/structural_hash.h"
#include "tests/ir/ir_gen.h"

namespace cds::ir {
namespace {

constexpr int kBaseCases = 500;

int PropertyCases() {
  int scale = 1;
  if (const char* env = std::getenv("CDS_PROP_SCALE")) {
    int v = std::atoi(env);
    if (v > 0) scale = v;
  }
  return kBaseCases * scale;
}

bool RcParamsNamesMaxSuccess() {
  const char* env = std::getenv("RC_PARAMS");
  return env != nullptr && std::string(env).find("max_success") != std::string::npos;
}

// rc::detail::checkGTest with our case count instead of the global one.
template <typename Testable>
void CheckProperty(Testable&& testable) {
  using namespace rc::detail;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  TestParams params = configuration().testParams;
  if (!RcParamsNamesMaxSuccess()) params.maxSuccess = PropertyCases();
  const TestResult result = checkTestable(std::forward<Testable>(testable), metadata, params);
  std::ostringstream msg;
  printResultMessage(result, msg);
  if (result.template is<SuccessResult>()) {
    EXPECT_GE(result.template get<SuccessResult>().numSuccess, params.maxSuccess) << msg.str();
    std::cout << msg.str() << std::endl;
  } else {
    FAIL() << msg.str();
  }
}

// A choice vector; its length grows with RapidCheck's size parameter.
rc::Gen<std::vector<uint32_t>> ChoiceVector() {
  return rc::gen::scale(10.0,
                        rc::gen::container<std::vector<uint32_t>>(rc::gen::arbitrary<uint32_t>()));
}

ProgramPtr Program(const std::vector<uint32_t>& choices) {
  irgen::Choices c(choices);
  return irgen::GenProgram(c);
}

std::string Where(const NodePtr& a, const NodePtr& b) {
  EqualityResult r = StructuralEqualWhere(a, b);
  return r.path + ": " + r.reason;
}

TEST(StructuralProperty, EqualityIsReflexive) {
  CheckProperty([] {
    ProgramPtr p = Program(*ChoiceVector());
    RC_ASSERT(StructuralEqual(p, p));
    RC_ASSERT(StructuralHash(p) == StructuralHash(p));
  });
}

TEST(StructuralProperty, RebuildingFromTheSameChoicesIsEqual) {
  CheckProperty([] {
    std::vector<uint32_t> choices = *ChoiceVector();
    ProgramPtr a = Program(choices);
    ProgramPtr b = Program(choices);
    RC_LOG() << Where(a, b) << "\n";
    RC_ASSERT(StructuralEqual(a, b));
    RC_ASSERT(StructuralHash(a) == StructuralHash(b));
  });
}

// A second choice vector for a pair: the same choices, the choices with one value
// changed (which may or may not change the program), or unrelated choices.
std::vector<uint32_t> RelatedChoices(const std::vector<uint32_t>& ca) {
  switch (*rc::gen::inRange(0, 3)) {
    case 0:
      return ca;
    case 1: {
      std::vector<uint32_t> cb = ca;
      if (!cb.empty()) cb[*rc::gen::inRange<size_t>(0, cb.size())] = *rc::gen::inRange<uint32_t>(0, 4);
      return cb;
    }
    default:
      return *ChoiceVector();
  }
}

// Pairs that are equal often enough to matter: the second program is built from
// the same choices, from the choices with one value changed (which may or may not
// change the program), or from unrelated choices.
TEST(StructuralProperty, EqualImpliesEqualHashAndIsSymmetric) {
  CheckProperty([] {
    std::vector<uint32_t> ca = *ChoiceVector();
    std::vector<uint32_t> cb = RelatedChoices(ca);
    ProgramPtr a = Program(ca);
    ProgramPtr b = Program(cb);
    bool ab = StructuralEqual(a, b);
    bool ba = StructuralEqual(b, a);
    RC_TAG(ab ? "equal" : "different");
    RC_ASSERT(ab == ba);
    if (ab) RC_ASSERT(StructuralHash(a) == StructuralHash(b));
  });
}

TEST(StructuralProperty, RenamingEveryVarPreservesEqualityAndHash) {
  CheckProperty([] {
    ProgramPtr p = Program(*ChoiceVector());
    NodePtr q = irgen::RenamedCopy(p, "renamed_");
    RC_LOG() << Where(p, q) << "\n";
    RC_ASSERT(q != NodePtr(p));
    RC_ASSERT(StructuralEqual(p, q));
    RC_ASSERT(StructuralEqual(q, p));
    RC_ASSERT(StructuralHash(p) == StructuralHash(q));
  });
}

TEST(StructuralProperty, BreakingWindowBufferSharingIsSeen) {
  CheckProperty([] {
    ProgramPtr p = Program(*ChoiceVector());
    NodePtr q = irgen::UnsharedWindowsCopy(p);
    bool repeated = irgen::HasRepeatedWindowBuffer(p);
    RC_TAG(repeated ? "shared window" : "no shared window");
    RC_LOG() << Where(p, q) << "\n";
    RC_ASSERT(StructuralEqual(p, q) == !repeated);
    RC_ASSERT(StructuralEqual(q, p) == !repeated);
    if (repeated) RC_ASSERT(StructuralHash(p) != StructuralHash(q));
  });
}

TEST(StructuralProperty, ChangingOneConstantBreaksEquality) {
  CheckProperty([] {
    ProgramPtr p = Program(*ChoiceVector());
    size_t n = irgen::CountReachableInts(p);
    RC_ASSERT(n > 0u);  // every generated function returns a constant
    size_t k = *rc::gen::inRange<size_t>(0, n);
    NodePtr q = irgen::BumpInt(p, k);
    RC_ASSERT(q != NodePtr(p));
    RC_ASSERT(!StructuralEqual(p, q));
    RC_ASSERT(!StructuralEqual(q, p));
    RC_ASSERT(StructuralHash(p) != StructuralHash(q));
  });
}

// StructuralEqualAndHash (the round trip's fused walk) agrees with StructuralEqual,
// and on equal pairs its two hashes are StructuralHash of each side.
void CheckFused(const NodePtr& a, const NodePtr& b) {
  EqualAndHashes r = StructuralEqualAndHash(a, b);
  RC_ASSERT(r.equal == StructuralEqual(a, b));
  if (r.equal) {
    RC_ASSERT(r.lhs_hash == StructuralHash(a));
    RC_ASSERT(r.rhs_hash == StructuralHash(b));
  }
}

TEST(StructuralProperty, FusedEqualAndHashAgreesWithSeparateWalks) {
  CheckProperty([] {
    std::vector<uint32_t> ca = *ChoiceVector();
    // A fifth of the pairs each are renamed and window-unshared copies.
    switch (*rc::gen::inRange(0, 5)) {
      case 0: {
        ProgramPtr p = Program(ca);
        NodePtr q = irgen::RenamedCopy(p, "renamed_");
        RC_TAG("renamed");
        CheckFused(p, q);
        CheckFused(q, p);
        return;
      }
      case 1: {
        ProgramPtr p = Program(ca);
        NodePtr q = irgen::UnsharedWindowsCopy(p);
        RC_TAG("unshared windows");
        CheckFused(p, q);
        CheckFused(q, p);
        return;
      }
      default:
        break;
    }
    std::vector<uint32_t> cb = RelatedChoices(ca);
    ProgramPtr a = Program(ca);
    ProgramPtr b = Program(cb);
    RC_TAG(StructuralEqual(a, b) ? "equal" : "different");
    CheckFused(a, b);
    CheckFused(b, a);
    CheckFused(a, a);
  });
}

TEST(StructuralProperty, FusedEqualAndHashSeesOneChangedConstant) {
  CheckProperty([] {
    ProgramPtr p = Program(*ChoiceVector());
    size_t n = irgen::CountReachableInts(p);
    RC_ASSERT(n > 0u);
    NodePtr q = irgen::BumpInt(p, *rc::gen::inRange<size_t>(0, n));
    RC_ASSERT(!StructuralEqualAndHash(p, q).equal);
    RC_ASSERT(!StructuralEqualAndHash(q, p).equal);
  });
}

}  // namespace
}  // namespace cds::ir
