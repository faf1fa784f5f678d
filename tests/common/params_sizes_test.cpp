// TGL-P-9: a plugin accepts every published size of a params struct and gives the fields a shorter
// struct lacks their NULL-params defaults. The test grows one as a later minor might (the softmax
// params), read from a host built against the minor before (TGL_SOFTMAX_PARAMS_SIZE_V1_0 bytes)
// and from a host of the newer minor; and the one ABI 1.3 grew, tgl_arg_reduce_params.
#include "op_catalogue.h"
#include "validate_util.h"

#include <gtest/gtest.h>

namespace {

// tgl_softmax_params with one field appended (as by "1.3").
struct grown_softmax_params {
    uint32_t struct_size;
    int32_t axis;
    float scale;
    uint32_t reserved;
    float appended; /* new in "1.3"; default 0.5 */
    uint32_t reserved2;
};

}  // namespace

namespace tgl {
template <>
struct PublishedSizes<grown_softmax_params> {
    static constexpr uint32_t sizes[] = {TGL_SOFTMAX_PARAMS_SIZE_V1_0,
                                         TGL_STRUCT_SIZE(grown_softmax_params, reserved2)};
};
}  // namespace tgl

namespace {

const grown_softmax_params kDefaults{sizeof(grown_softmax_params), -1, 1.0f, 0, 0.5f, 0};

const tgl::OpInfo& softmax() { return *tgl::find_op(TGL_OP_SOFTMAX); }

TEST(ParamsSizes, OlderPublishedSizeKeepsItsFieldsAndDefaultsTheTail) {
    // The older host's struct is the real 1.2 type, with its own sizeof.
    tgl_softmax_params old{};
    old.struct_size = sizeof old;
    old.axis = 0;
    old.scale = 2.0f;
    ASSERT_EQ(sizeof old, TGL_SOFTMAX_PARAMS_SIZE_V1_0);
    const grown_softmax_params p = tgl::read_params(softmax(), &old, kDefaults);
    EXPECT_EQ(p.axis, 0);
    EXPECT_EQ(p.scale, 2.0f);
    EXPECT_EQ(p.appended, 0.5f) << "the field the older struct lacks takes its default";
    EXPECT_EQ(p.struct_size, sizeof(grown_softmax_params));
}

TEST(ParamsSizes, NewestSizeIsReadWhole) {
    grown_softmax_params now{sizeof(grown_softmax_params), 1, 3.0f, 0, 7.0f, 0};
    const grown_softmax_params p = tgl::read_params(softmax(), &now, kDefaults);
    EXPECT_EQ(p.axis, 1);
    EXPECT_EQ(p.scale, 3.0f);
    EXPECT_EQ(p.appended, 7.0f);
}

TEST(ParamsSizes, NullParamsGiveTheDefaults) {
    const grown_softmax_params p = tgl::read_params(softmax(), nullptr, kDefaults);
    EXPECT_EQ(p.axis, -1);
    EXPECT_EQ(p.appended, 0.5f);
}

TEST(ParamsSizes, UnpublishedSizeIsRejectedNamingThePublishedOnes) {
    for (uint32_t size : {0u, 4u, 12u, 20u, 28u}) {
        grown_softmax_params bad = kDefaults;
        bad.struct_size = size;
        try {
            tgl::read_params(softmax(), &bad, kDefaults);
            ADD_FAILURE() << "struct_size " << size << " was accepted";
        } catch (const tgl::Error& e) {
            EXPECT_EQ(e.status(), TGL_ERROR_PARAMS_SIZE) << size;
            EXPECT_NE(std::string(e.what()).find("16 or 24"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("is " + std::to_string(size)), std::string::npos) << e.what();
        }
    }
}

}  // namespace

// The first struct a minor grew for real: tgl_arg_reduce_params (select_last_index, ABI 1.3).
namespace {

TEST(ParamsSizes, ArgReduceParamsOfBothPublishedSizes) {
    const tgl::OpInfo& argmax = *tgl::find_op(TGL_OP_ARGMAX);
    const tgl_arg_reduce_params defaults{sizeof(tgl_arg_reduce_params), -1, 0, 0, 0};
    tgl_arg_reduce_params v13{sizeof(tgl_arg_reduce_params), 1, 1, 0, 1};
    EXPECT_EQ(tgl::read_params(argmax, &v13, defaults).select_last_index, 1u);
    // A 1.2 host's struct: 16 bytes, followed here by a byte pattern that must not be read.
    struct {
        uint32_t words[4];
        uint32_t beyond;
    } v10{{TGL_ARG_REDUCE_PARAMS_SIZE_V1_0, 1, 1, 0}, 0xdeadbeefu};
    const tgl_arg_reduce_params p = tgl::read_params(argmax, &v10, defaults);
    EXPECT_EQ(p.axis, 1);
    EXPECT_EQ(p.keepdims, 1u);
    EXPECT_EQ(p.select_last_index, 0u) << "the field the 1.0 struct lacks takes its default";
    EXPECT_EQ(tgl::published_sizes_text<tgl_arg_reduce_params>(), "16 or 20");
}

}  // namespace
