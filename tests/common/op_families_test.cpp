// The op family tables of backends/common (op_families.h) and OpCall's plan accessors (validate.h):
// every op of the catalogue finds its family's planning rules, and the internal errors of a missing
// family or a plan of another family name the op.
#include "op_families.h"
#include "status.h"
#include "validate.h"

#include <gtest/gtest.h>

#include <string>

namespace {

// The status and message of what f() throws (TGL_OK, "" if nothing).
template <class F>
std::pair<tgl_status, std::string> thrown(const F& f) {
    try {
        f();
    } catch (const tgl::Error& e) {
        return {e.status(), e.what()};
    }
    return {TGL_OK, ""};
}

TEST(OpFamilies, EveryCatalogueOpHasPlanningRules) {
    uint32_t count = 0;
    const tgl::OpInfo* ops = tgl::all_ops(&count);
    ASSERT_GT(count, 0u);
    for (uint32_t i = 0; i < count; ++i) {
        const auto [status, message] = thrown([&] { tgl::family_rules(ops[i]); });
        EXPECT_EQ(status, TGL_OK) << "op '" << ops[i].name << "': " << message;
    }
}

TEST(OpFamilies, OnlyTheElementwiseFamiliesPlanInPlaceAndReadParamsFirst) {
    for (tgl_op op : {TGL_OP_RELU, TGL_OP_ADD, TGL_OP_WHERE, TGL_OP_SUM, TGL_OP_MATMUL, TGL_OP_CUMSUM}) {
        const tgl::FamilyRules& rules = tgl::family_rules(*tgl::find_op(op));
        const bool elementwise = op == TGL_OP_RELU || op == TGL_OP_ADD || op == TGL_OP_WHERE;
        EXPECT_EQ(rules.in_place, elementwise) << tgl::find_op(op)->name;
        EXPECT_EQ(rules.read_params_first != nullptr, elementwise) << tgl::find_op(op)->name;
    }
}

TEST(OpFamilies, AFamilyWithoutAnEntryIsAnInternalErrorNamingTheOp) {
    const std::vector<tgl::FamilyRules> none;
    const auto [status, message] = thrown([&] { tgl::family_entry(none, *tgl::find_op(TGL_OP_SOFTMAX), "the table"); });
    EXPECT_EQ(status, TGL_ERROR_INTERNAL);
    EXPECT_NE(message.find("op 'softmax'"), std::string::npos) << message;
    EXPECT_NE(message.find("the table"), std::string::npos) << message;
}

TEST(OpFamilies, APlanOfAnotherFamilyIsAnInternalErrorNamingTheOp) {
    tgl::OpCall call;
    call.info = tgl::find_op(TGL_OP_SUM);
    const auto [unplanned, unplanned_message] = thrown([&] { call.reduce(); });
    EXPECT_EQ(unplanned, TGL_ERROR_INTERNAL) << "before planning, the call holds no plan";
    call.plan.emplace<tgl::ReducePlan>().correction = 0.5f;
    EXPECT_EQ(call.reduce().correction, 0.5f);
    const tgl::OpCall& planned = call;
    EXPECT_EQ(planned.reduce().correction, 0.5f);
    const auto [status, message] = thrown([&] { planned.scan(); });
    EXPECT_EQ(status, TGL_ERROR_INTERNAL);
    EXPECT_NE(message.find("op 'sum'"), std::string::npos) << message;
    EXPECT_NE(message.find("no scan plan"), std::string::npos) << message;
}

}  // namespace
