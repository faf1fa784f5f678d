// The op families as tables: here how validate_op() plans an op of each family, in each plugin how
// it runs one (backends/cpu/kernels.h, backends/gles/gles_families.h). A family registers its own
// entries: its <family>_rules.cpp defines register_<family>_rules(), its <family>_kernels.cpp in each
// plugin register_<family>_kernels(), each appending one entry per OpFamily value the family serves;
// the build calls those of every family in TGL_OP_FAMILIES (cmake/op_families.cmake) through a
// generated registered_family_rules() / registered_family_kernels(). The recipe for a new family:
// docs/adding-an-op-family.md.
#pragma once

#include "op_catalogue.h"

#include <vector>

namespace tgl {

struct OpCall;

struct FamilyRules {
    OpFamily family;
    // Builds call.plan from the checked operands and the params; throws tgl::Error naming the
    // argument at fault.
    void (*plan)(OpCall& call, const void* params);
    // Reads and checks the params before the operands are checked (nullptr: `plan` reads them).
    void (*read_params_first)(OpCall& call, const void* params) = nullptr;
    // An output may be an input's identical view: every element is read and written by the same
    // invocation (elementwise ops).
    bool in_place = false;
};

// Generated (cmake/op_families.cmake): the entries every family's register_<family>_rules() appends.
std::vector<FamilyRules> registered_family_rules();

// The rules of `info`'s family; an internal error naming the op if no family registered them.
const FamilyRules& family_rules(const OpInfo& info);

[[noreturn]] void missing_family(const OpInfo& info, const char* table);

// The entry of `info`'s family among registered entries (each with a `family` member); an internal
// error naming the op and `table` if there is none.
template <class Entry>
const Entry& family_entry(const std::vector<Entry>& entries, const OpInfo& info, const char* table) {
    for (const Entry& e : entries)
        if (e.family == info.family) return e;
    missing_family(info, table);
}

}  // namespace tgl
