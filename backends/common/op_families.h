// The op families as tables, one line per family: here how validate_op() plans an op of each
// family (op_families.cpp), and in each plugin how it runs one (backends/<plugin>/op_families.cpp).
// An op's family is its catalogue row's (op_catalogue.h). The recipe for a new family:
// docs/adding-an-op-family.md.
#pragma once

#include "op_catalogue.h"

#include <cstddef>

namespace tgl {

struct OpCall;

struct FamilyRules {
    OpFamily family;
    // Builds call.plan from the checked operands and the params; throws tgl::Error naming the
    // argument at fault.
    void (*plan)(OpCall& call, const void* params);
    // Reads and checks the params before the operands are checked (nullptr: `plan` reads them).
    void (*read_params_first)(OpCall& call, const void* params);
    // An output may be an input's identical view: every element is read and written by the same
    // invocation (elementwise ops).
    bool in_place;
};

// The rules of `info`'s family; an internal error naming the op if the table has none.
const FamilyRules& family_rules(const OpInfo& info);

[[noreturn]] void missing_family(const OpInfo& info, const char* table);

// The entry of `info`'s family in a table of entries with a `family` member (each plugin's run
// table); an internal error naming the op and `table` if there is none.
template <class Entry, size_t N>
const Entry& family_entry(const Entry (&entries)[N], const OpInfo& info, const char* table) {
    for (const Entry& e : entries)
        if (e.family == info.family) return e;
    missing_family(info, table);
}

}  // namespace tgl
