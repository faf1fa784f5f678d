// How validate_op() plans each op family: one line per family. The planners are in the
// families' <family>_rules.cpp.
#include "op_families.h"

#include "status.h"
#include "validate.h"

namespace tgl {
namespace {

const FamilyRules kFamilies[] = {
    // family              plan               params read before the operands   in place
    {OpFamily::Unary,     plan_elementwise, read_elementwise_params,         true},
    {OpFamily::Binary,    plan_elementwise, read_elementwise_params,         true},
    {OpFamily::Ternary,   plan_elementwise, read_elementwise_params,         true},
    {OpFamily::Reduce,    plan_reduce,      nullptr,                         false},
    {OpFamily::ArgReduce, plan_arg_reduce,  nullptr,                         false},
    {OpFamily::Scan,      plan_scan,        nullptr,                         false},
    {OpFamily::Matmul,    plan_matmul,      nullptr,                         false},
    {OpFamily::Normalize, plan_norm,        nullptr,                         false},
    {OpFamily::Layout,    plan_layout,      nullptr,                         false},
    {OpFamily::Index,     plan_index,       nullptr,                         false},
    {OpFamily::Select,    plan_select,      nullptr,                         false},
    {OpFamily::Generate,  plan_generate,    nullptr,                         false},
    {OpFamily::Conv,      plan_conv,        nullptr,                         false},
    {OpFamily::Pool,      plan_pool,        nullptr,                         false},
    {OpFamily::Attention, plan_attention,   nullptr,                         false},
    {OpFamily::Sequence,  plan_sequence,    nullptr,                         false},
    {OpFamily::Grad,      plan_grad,        nullptr,                         false},
};

}  // namespace

const FamilyRules& family_rules(const OpInfo& info) { return family_entry(kFamilies, info, "backends/common/op_families.cpp"); }

void missing_family(const OpInfo& info, const char* table) {
    fail(TGL_ERROR_INTERNAL,
         "op '%s': its op family (OpFamily %d) has no entry in %s (each family has one line in each table: "
         "docs/adding-an-op-family.md)",
         info.name, int(info.family), table);
}

}  // namespace tgl
