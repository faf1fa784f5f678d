// Zero-size tensors are valid: an op whose output is empty succeeds and writes nothing; a
// reduction over an empty axis has its identity (sum 0, prod 1, mean NaN).
#include "common.h"

namespace conf {
namespace {

using ZeroSize = ConformanceTest;

// Runs op with the given (contiguous, padded) input shapes and an empty output; the op must succeed
// and leave every buffer exactly as it was.
void expect_noop(tgl_op op, const void* params, const std::vector<Shape>& in_shapes, const Shape& out_shape) {
    Device& d = dev();
    Layout padded;
    padded.name = "padded";
    padded.pad_front = 3;
    padded.pad_back = 5;
    std::vector<std::unique_ptr<DeviceTensor>> ins;
    std::vector<tgl_tensor> descs;
    for (const Shape& s : in_shapes) {
        ins.push_back(std::make_unique<DeviceTensor>(d, make_view(s, padded)));
        std::vector<float> storage(static_cast<size_t>(ins.back()->view().storage));
        for (size_t i = 0; i < storage.size(); ++i) storage[i] = float(i) + 0.5f;
        ins.back()->set_storage(storage);
        descs.push_back(ins.back()->desc());
    }
    DeviceTensor out(d, make_view(out_shape, padded));
    out.poison();
    tgl_status s = d.run(op, params, descs, {out.desc()});
    EXPECT_EQ(s, TGL_OK) << "op " << op << " on empty output " << shape_str(out_shape) << ": " << plug().last_error();
    d.synchronize();
    EXPECT_TRUE(out.unchanged()) << "empty output " << shape_str(out_shape) << " of op " << op;
    for (auto& t : ins) EXPECT_TRUE(t->unchanged());
}

TEST_F(ZeroSize, UnaryOpsAreNoOps) {
    tgl_gelu_params tanh_form{sizeof(tgl_gelu_params), TGL_GELU_TANH};
    for (tgl_op op : {TGL_OP_ABS, TGL_OP_NEG, TGL_OP_RELU, TGL_OP_SIGMOID, TGL_OP_TANH, TGL_OP_EXP, TGL_OP_LOG,
                      TGL_OP_SQRT, TGL_OP_GELU, TGL_OP_SILU}) {
        SCOPED_TRACE("op " + std::to_string(op));
        for (const Shape& s : {Shape{0}, Shape{3, 0, 2}, Shape{0, 0}, Shape{1, 1, 1, 1, 1, 1, 1, 0}})
            expect_noop(op, nullptr, {s}, s);
        if (op == TGL_OP_GELU) expect_noop(op, &tanh_form, {{4, 0}}, {4, 0});
    }
}

TEST_F(ZeroSize, BinaryOpsAreNoOps) {
    for (tgl_op op : {TGL_OP_ADD, TGL_OP_SUB, TGL_OP_MUL, TGL_OP_DIV, TGL_OP_MAXIMUM, TGL_OP_MINIMUM, TGL_OP_POW}) {
        SCOPED_TRACE("op " + std::to_string(op));
        expect_noop(op, nullptr, {{0}, {0}}, {0});
        expect_noop(op, nullptr, {{0, 3}, {3}}, {0, 3});
        expect_noop(op, nullptr, {{2, 0}, {2, 1}}, {2, 0});
        expect_noop(op, nullptr, {{0}, {}}, {0});         // empty with a scalar
        expect_noop(op, nullptr, {{1, 0}, {5, 1}}, {5, 0});  // both broadcast into an empty shape
    }
}

TEST_F(ZeroSize, ReductionsWithEmptyOutputAreNoOps) {
    for (tgl_op op : {TGL_OP_SUM, TGL_OP_MEAN, TGL_OP_MAX, TGL_OP_MIN, TGL_OP_PROD}) {
        SCOPED_TRACE("op " + std::to_string(op));
        tgl_reduce_params p = reduce_params({1}, false);
        expect_noop(op, &p, {{0, 3}}, {0});
        p = reduce_params({1}, true);
        expect_noop(op, &p, {{0, 3}}, {0, 1});
        // Even when the reduced axis is empty too, an empty output means nothing to do.
        p = reduce_params({0}, false);
        expect_noop(op, &p, {{0, 0}}, {0});
    }
}

TEST_F(ZeroSize, ReductionOverEmptyAxisGivesIdentity) {
    // (2, 0) reduced over axis 1 -> (2,): sum 0, prod 1, mean NaN (0/0).
    const Shape xs = {2, 0};
    EXPECT_TRUE(compare(reduce(TGL_OP_SUM, xs, {}, {1}, false, {2}), {0, 0}, {2}, 0, CompareMode::Exact));
    EXPECT_TRUE(compare(reduce(TGL_OP_PROD, xs, {}, {1}, false, {2}), {1, 1}, {2}, 0, CompareMode::Exact));
    EXPECT_TRUE(compare(reduce(TGL_OP_MEAN, xs, {}, {1}, false, {2}), {kNaN, kNaN}, {2}, 0, CompareMode::Exact));
    EXPECT_TRUE(compare(reduce(TGL_OP_SUM, xs, {}, {-1}, true, {2, 1}), {0, 0}, {2, 1}, 0, CompareMode::Exact));
    // Everything of an empty tensor -> scalar.
    EXPECT_TRUE(compare(reduce(TGL_OP_SUM, {0}, {}, {}, false, {}), {0}, {}, 0, CompareMode::Exact));
    EXPECT_TRUE(compare(reduce(TGL_OP_PROD, {3, 0, 2}, {}, {}, false, {}), {1}, {}, 0, CompareMode::Exact));
    EXPECT_TRUE(compare(reduce(TGL_OP_SUM, {3, 0, 2}, {}, {1}, false, {3, 2}), {0, 0, 0, 0, 0, 0}, {3, 2}, 0,
                        CompareMode::Exact));
    EXPECT_TRUE(compare(reduce(TGL_OP_PROD, {3, 0, 2}, {}, {0, 1}, true, {1, 1, 2}), {1, 1}, {1, 1, 2}, 0,
                        CompareMode::Exact));
}

TEST_F(ZeroSize, MatmulWithEmptyOutputIsNoOp) {
    auto p = matmul_params(false, false, 1.0f, 1.0f);
    expect_noop(TGL_OP_MATMUL, &p, {{0, 3}, {3, 2}}, {0, 2});                 // M = 0
    expect_noop(TGL_OP_MATMUL, &p, {{2, 3}, {3, 0}}, {2, 0});                 // N = 0
    expect_noop(TGL_OP_MATMUL, &p, {{0, 2, 3}, {3, 2}}, {0, 2, 2});           // batch 0
    expect_noop(TGL_OP_MATMUL, &p, {{0, 0}, {0, 0}}, {0, 0});                 // all 0
    expect_noop(TGL_OP_MATMUL, nullptr, {{4, 0, 2, 3}, {1, 3, 2}}, {4, 0, 2, 2});  // broadcast batch 0
}

}  // namespace
}  // namespace conf
