// The bad-input harness shared by the general cases (bad_input_test.cpp) and the family files:
// each file lists its BadCase table and instantiates BadInput with it, named after its family
// (Conformance/BadInput.* are the cases of no one family). Every misuse gets its own status and
// a message naming the argument; nothing is written (poisoned outputs and inputs stay byte for
// byte as they were); the device keeps working; the thread's message survives successful calls.
#pragma once

#include "common.h"

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace conf {

// Operands of three good ops, all in guarded buffers: add (2,3)+(3,)->(2,3), sum over axis 1
// (2,3)->(2,), matmul (2,3)@(3,2)->(2,2). Each case breaks one argument of one call.
struct Ctx {
    Device& d = dev();
    const tgl_plugin_api& api = d.api();
    DeviceTensor a{d, contiguous({2, 3})}, b{d, contiguous({3})}, y{d, contiguous({2, 3})};
    DeviceTensor x{d, contiguous({2, 3})}, r{d, contiguous({2})};
    DeviceTensor A{d, contiguous({2, 3})}, B{d, contiguous({3, 2})}, C{d, contiguous({2, 2})};
    DeviceTensor I{d, contiguous({2, 3}), TGL_DTYPE_I32};  // indices along x's axis 1
    tgl_reduce_params rp = reduce_params({1}, false);
    tgl_matmul_params mp = matmul_params(false, false, 1.0f, 0.0f);
    std::string message;  // set by a case whose failing call is not its last call
    std::string skip;     // set by a case the plugin cannot run

    Ctx() {
        a.set_values({1, 2, 3, 4, 5, 6});
        b.set_values({10, 20, 30});
        x.set_values({1, 2, 3, 4, 5, 6});
        A.set_values({1, 2, 3, 4, 5, 6});
        B.set_values({7, 8, 9, 10, 11, 12});
        I.set_logical({0, 1, 2, 2, 1, 0});
        y.poison();
        r.poison();
        C.poison();
    }

    tgl_status add(const tgl_tensor& ta, const tgl_tensor& tb, const tgl_tensor& ty, const void* params = nullptr) {
        tgl_tensor in[2] = {ta, tb};
        return api.run_op(d.handle(), TGL_OP_ADD, params, in, 2, &ty, 1);
    }
    tgl_status sum(const tgl_tensor& tx, const tgl_tensor& tr, const void* params) {
        return api.run_op(d.handle(), TGL_OP_SUM, params, &tx, 1, &tr, 1);
    }
    tgl_status matmul(const tgl_tensor& tA, const tgl_tensor& tB, const tgl_tensor& tC, const void* params) {
        tgl_tensor in[2] = {tA, tB};
        return api.run_op(d.handle(), TGL_OP_MATMUL, params, in, 2, &tC, 1);
    }

    void expect_untouched() {
        DeviceTensor* all[] = {&a, &b, &y, &x, &r, &A, &B, &C, &I};
        const char* names[] = {"a", "b", "y", "x", "r", "A", "B", "C", "I"};
        for (int i = 0; i < 9; ++i) EXPECT_TRUE(all[i]->unchanged()) << "tensor " << names[i] << " after the bad call";
    }

    void expect_device_works() {
        ASSERT_EQ(add(a.desc(), b.desc(), y.desc()), TGL_OK) << plug().last_error();
        EXPECT_TRUE(compare(y.read(), {11, 22, 33, 14, 25, 36}, {2, 3}, 0, CompareMode::Exact));
        ASSERT_EQ(sum(x.desc(), r.desc(), &rp), TGL_OK) << plug().last_error();
        EXPECT_TRUE(compare(r.read(), {6, 15}, {2}, 0, CompareMode::Exact));
        ASSERT_EQ(matmul(A.desc(), B.desc(), C.desc(), &mp), TGL_OK) << plug().last_error();
        EXPECT_TRUE(compare(C.read(), {58, 64, 139, 154}, {2, 2}, 0, CompareMode::Exact));
    }
};

struct BadCase {
    const char* name;
    tgl_status want;
    std::vector<std::string> tokens;  // the message must contain each (the argument's name)
    std::function<tgl_status(Ctx&)> call;
};

inline void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

inline tgl_tensor with(tgl_tensor t, const std::function<void(tgl_tensor&)>& edit) {
    edit(t);
    return t;
}

inline std::string bad_case_name(const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; }

// The test (bad_input_test.cpp): runs the case's call on a fresh Ctx and checks status, message,
// untouched tensors and a working device.
class BadInput : public SeededTestWithParam<BadCase> {};

}  // namespace conf
