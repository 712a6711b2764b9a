// RapidCheck properties of StructuralEqual / StructuralHash over random
// well-formed IR (tests/ir/ir_gen.h).
//
// Each property runs 500 x CDS_PROP_SCALE cases through prop::CheckProperty
// (tests/prop/prop_budget.h): RC_PARAMS="max_success=N" overrides the count,
// RC_PARAMS seeds and `reproduce=` strings work as usual, and a failing
// property shrinks for at most CDS_PROP_SHRINK_SECONDS.

#include <string>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "ir/structural_equal.h"
#include "ir/structural_hash.h"
#include "tests/ir/ir_gen.h"
#include "tests/prop/prop_budget.h"

namespace cds::ir {
namespace {

constexpr int kBaseCases = 500;

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
  prop::CheckProperty(kBaseCases, [] {
    ProgramPtr p = Program(*ChoiceVector());
    RC_ASSERT(StructuralEqual(p, p));
    RC_ASSERT(StructuralHash(p) == StructuralHash(p));
  });
}

TEST(StructuralProperty, RebuildingFromTheSameChoicesIsEqual) {
  prop::CheckProperty(kBaseCases, [] {
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
      if (!cb.empty())
        cb[*rc::gen::inRange<size_t>(0, cb.size())] = *rc::gen::inRange<uint32_t>(0, 4);
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
  prop::CheckProperty(kBaseCases, [] {
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
  prop::CheckProperty(kBaseCases, [] {
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
  prop::CheckProperty(kBaseCases, [] {
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
  prop::CheckProperty(kBaseCases, [] {
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
  prop::CheckProperty(kBaseCases, [] {
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
  prop::CheckProperty(kBaseCases, [] {
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
