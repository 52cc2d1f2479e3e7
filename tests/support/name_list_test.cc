// The list macros write one piece of code per name, in order, and nothing for names not listed.
#include "support/name_list.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/status.h"

namespace edgec {
namespace {

#define EDGEC_TEST_APPEND(v, x) v.push_back(#x);

TEST(NameList, ForEachVisitsEveryNameInOrder) {
  std::vector<std::string> seen;
  EDGEC_FOR_EACH(EDGEC_TEST_APPEND, seen, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q)
  ASSERT_EQ(seen.size(), 17u);
  EXPECT_EQ(seen.front(), "a");
  EXPECT_EQ(seen[9], "j");
  EXPECT_EQ(seen.back(), "q");
  std::vector<std::string> none;
  EDGEC_FOR_EACH(EDGEC_TEST_APPEND, none)
  EXPECT_TRUE(none.empty());
}

struct Ctx {
  std::vector<std::string> calls;
};
Status Rule(Ctx& ctx) {
  ctx.calls.push_back("rule");
  return InvalidArgument("rule {}", ctx.calls.size());
}
EDGEC_SHARED_RULE(Ctx, Rule, OpA, OpB, OpC)

TEST(NameList, SharedRuleCallsTheOneFunction) {
  Ctx ctx;
  EXPECT_EQ(OpA(ctx).message(), "rule 1");
  EXPECT_EQ(OpC(ctx).message(), "rule 2");
  EXPECT_EQ(OpB(ctx).message(), "rule 3");
}

struct Public {
  int a = 1;
  double b = 2;
  std::string c = "public";
  int only_public = 4;
};
struct Internal {
  int a = 10;
  double b = 20;
  std::string c = "internal";
  int only_internal = 40;
};

TEST(NameList, CopyFieldsCopiesTheListedFieldsOnly) {
  Public from;
  Internal to;
  EDGEC_COPY_FIELDS(to, from, a, c)
  EXPECT_EQ(to.a, 1);
  EXPECT_EQ(to.b, 20);
  EXPECT_EQ(to.c, "public");
  EXPECT_EQ(to.only_internal, 40);
}

}  // namespace
}  // namespace edgec
