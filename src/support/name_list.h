// Macros that take a list of names and write one piece of code per name, so that a list
// (the ops that share one rule, the fields two option structs share) is written once.
// Guarded by tests/support/name_list_test.cc.
#pragma once

// EDGEC_FOR_EACH(m, a, x1, x2, ...) expands to m(a, x1) m(a, x2) ... (up to ~250 names).
#define EDGEC_FOR_EACH(m, a, ...) __VA_OPT__(EDGEC_LIST_EXPAND(EDGEC_FOR_EACH_STEP(m, a, __VA_ARGS__)))
#define EDGEC_FOR_EACH_STEP(m, a, x, ...) m(a, x) __VA_OPT__(EDGEC_FOR_EACH_AGAIN EDGEC_LIST_PARENS(m, a, __VA_ARGS__))
#define EDGEC_FOR_EACH_AGAIN() EDGEC_FOR_EACH_STEP
#define EDGEC_LIST_PARENS ()
// Each level rescans its argument four times; four levels give the recursion 256 steps.
#define EDGEC_LIST_EXPAND(...) EDGEC_LIST_EXPAND3(EDGEC_LIST_EXPAND3(EDGEC_LIST_EXPAND3(EDGEC_LIST_EXPAND3(__VA_ARGS__))))
#define EDGEC_LIST_EXPAND3(...) EDGEC_LIST_EXPAND2(EDGEC_LIST_EXPAND2(EDGEC_LIST_EXPAND2(EDGEC_LIST_EXPAND2(__VA_ARGS__))))
#define EDGEC_LIST_EXPAND2(...) EDGEC_LIST_EXPAND1(EDGEC_LIST_EXPAND1(EDGEC_LIST_EXPAND1(EDGEC_LIST_EXPAND1(__VA_ARGS__))))
#define EDGEC_LIST_EXPAND1(...) __VA_ARGS__

// EDGEC_SHARED_RULE(Context, fn, Op1, Op2, ...) defines `Status OpK(Context& ctx)` as fn(ctx)
// for every op: the ops of a group that one shape function or one kernel serves.
#define EDGEC_SHARED_RULE(Context, fn, ...) EDGEC_FOR_EACH(EDGEC_SHARED_RULE_ONE, (Context, fn), __VA_ARGS__)
#define EDGEC_SHARED_RULE_ONE(cf, op) EDGEC_SHARED_RULE_DEFINE(EDGEC_LIST_FIRST cf, EDGEC_LIST_SECOND cf, op)
#define EDGEC_SHARED_RULE_DEFINE(Context, fn, op) \
  Status op(Context& ctx) { return fn(ctx); }

// EDGEC_COPY_FIELDS(to, from, f1, f2, ...) assigns to.fK = from.fK for every field: the one
// conversion between a public options struct and the internal one that has the same fields.
#define EDGEC_COPY_FIELDS(to, from, ...) EDGEC_FOR_EACH(EDGEC_COPY_FIELD, (to, from), __VA_ARGS__)
#define EDGEC_COPY_FIELD(tf, f) (EDGEC_LIST_FIRST tf).f = (EDGEC_LIST_SECOND tf).f;

#define EDGEC_LIST_FIRST(a, b) a
#define EDGEC_LIST_SECOND(a, b) b
