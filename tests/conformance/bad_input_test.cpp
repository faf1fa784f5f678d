// Bad input that is about no one op family: NULL pointers, handles, the dtype and descriptor rules
// every operand obeys, views against their buffers, operand counts, buffer calls, and outputs that
// overlap themselves (one rule, checked for one op of each kind). The family files hold their own
// cases (Unary/BadInput.*, Binary/BadInput.*, Reduce/BadInput.*, Matmul/BadInput.*); the harness
// and the test body are shared (bad_input.h).
#include "bad_input.h"

namespace conf {
namespace {

std::vector<BadCase> bad_cases() {
    std::vector<BadCase> c;
    // ---- NULL pointers
    c.push_back({"RunOpInputsNull", TGL_ERROR_NULL_POINTER, {"inputs"}, [](Ctx& k) {
                     tgl_tensor y = k.y.desc();
                     return k.api.run_op(k.d.handle(), TGL_OP_ADD, nullptr, nullptr, 2, &y, 1);
                 }});
    c.push_back({"RunOpOutputsNull", TGL_ERROR_NULL_POINTER, {"outputs"}, [](Ctx& k) {
                     tgl_tensor in[2] = {k.a.desc(), k.b.desc()};
                     return k.api.run_op(k.d.handle(), TGL_OP_ADD, nullptr, in, 2, nullptr, 1);
                 }});
    c.push_back({"DeviceCountOutNull", TGL_ERROR_NULL_POINTER, {"count"}, [](Ctx& k) { return k.api.device_count(nullptr); }});
    c.push_back({"DeviceOpenOutNull", TGL_ERROR_NULL_POINTER, {"out"}, [](Ctx& k) { return k.api.device_open(0, nullptr); }});
    c.push_back({"DevicePropertiesOutNull", TGL_ERROR_NULL_POINTER, {"props"}, [](Ctx& k) {
                     uint32_t n;
                     return k.api.device_properties(0, nullptr, &n);
                 }});
    c.push_back({"DevicePropertiesCountNull", TGL_ERROR_NULL_POINTER, {"count"}, [](Ctx& k) {
                     const tgl_property* p;
                     return k.api.device_properties(0, &p, nullptr);
                 }});
    c.push_back({"PluginInfoNull", TGL_ERROR_NULL_POINTER, {"info"}, [](Ctx& k) { return k.api.get_plugin_info(nullptr); }});
    c.push_back({"BufferAllocOutNull", TGL_ERROR_NULL_POINTER, {"out"},
                 [](Ctx& k) { return k.api.buffer_alloc(k.d.handle(), 64, nullptr); }});
    c.push_back({"BufferSizeOutNull", TGL_ERROR_NULL_POINTER, {"bytes"},
                 [](Ctx& k) { return k.api.buffer_size(k.d.handle(), k.y.buffer(), nullptr); }});
    c.push_back({"UploadSrcNull", TGL_ERROR_NULL_POINTER, {"src"},
                 [](Ctx& k) { return k.api.buffer_upload(k.d.handle(), k.y.buffer(), 0, nullptr, 4); }});
    c.push_back({"DownloadDstNull", TGL_ERROR_NULL_POINTER, {"dst"},
                 [](Ctx& k) { return k.api.buffer_download(k.d.handle(), k.y.buffer(), 0, nullptr, 4); }});
    c.push_back({"FillPatternNull", TGL_ERROR_NULL_POINTER, {"pattern"},
                 [](Ctx& k) { return k.api.buffer_fill(k.d.handle(), k.y.buffer(), 0, 16, nullptr, 4); }});
    // ---- handles
    c.push_back({"UnknownBufferHandle", TGL_ERROR_INVALID_HANDLE, {"inputs[1]"}, [](Ctx& k) {
                     return k.add(k.a.desc(), with(k.b.desc(), [](tgl_tensor& t) { t.buffer = 0x0123456789ABCDEFull; }),
                                  k.y.desc());
                 }});
    c.push_back({"NullBufferHandle", TGL_ERROR_INVALID_HANDLE, {"outputs[0]"}, [](Ctx& k) {
                     return k.add(k.a.desc(), k.b.desc(), with(k.y.desc(), [](tgl_tensor& t) { t.buffer = 0; }));
                 }});
    c.push_back({"DeviceHandleAsBuffer", TGL_ERROR_INVALID_HANDLE, {"inputs[0]"}, [](Ctx& k) {
                     return k.add(with(k.a.desc(), [&](tgl_tensor& t) { t.buffer = k.d.handle(); }), k.b.desc(), k.y.desc());
                 }});
    c.push_back({"UnknownDeviceHandle", TGL_ERROR_INVALID_HANDLE, {"device"}, [](Ctx& k) {
                     tgl_tensor in[2] = {k.a.desc(), k.b.desc()};
                     tgl_tensor y = k.y.desc();
                     return k.api.run_op(0xFEEDFACECAFEBEEFull, TGL_OP_ADD, nullptr, in, 2, &y, 1);
                 }});
    c.push_back({"BufferHandleAsDevice", TGL_ERROR_INVALID_HANDLE, {"device"}, [](Ctx& k) {
                     uint64_t size;
                     return k.api.buffer_size(k.y.buffer(), k.y.buffer(), &size);
                 }});
    c.push_back({"UseAfterFree", TGL_ERROR_STALE_HANDLE, {"inputs[0]"}, [](Ctx& k) {
                     tgl_buffer freed = k.d.alloc(1024);
                     k.d.free(freed);
                     return k.add(with(k.a.desc(), [&](tgl_tensor& t) { t.buffer = freed; }), k.b.desc(), k.y.desc());
                 }});
    c.push_back({"UploadAfterFree", TGL_ERROR_STALE_HANDLE, {"buffer"}, [](Ctx& k) {
                     tgl_buffer freed = k.d.alloc(64);
                     k.d.free(freed);
                     float v = 1;
                     return k.api.buffer_upload(k.d.handle(), freed, 0, &v, 4);
                 }});
    c.push_back({"DoubleFree", TGL_ERROR_STALE_HANDLE, {"buffer"}, [](Ctx& k) {
                     tgl_buffer freed = k.d.alloc(64);
                     k.d.free(freed);
                     return k.api.buffer_free(k.d.handle(), freed);
                 }});
    c.push_back({"FreeUnknownBuffer", TGL_ERROR_INVALID_HANDLE, {"buffer"},
                 [](Ctx& k) { return k.api.buffer_free(k.d.handle(), 0x00000000DEADBEEFull); }});
    c.push_back({"ClosedDevice", TGL_ERROR_STALE_HANDLE, {"device"}, [](Ctx& k) {
                     tgl_device d2 = 0;
                     k.d.check(k.api.device_open(0, &d2), "device_open (a second device)");
                     k.d.check(k.api.device_close(d2), "device_close");
                     tgl_buffer b = 0;
                     return k.api.buffer_alloc(d2, 64, &b);
                 }});
    c.push_back({"BufferOfClosedDevice", TGL_ERROR_STALE_HANDLE, {"inputs[0]"}, [](Ctx& k) {
                     tgl_device d2 = 0;
                     k.d.check(k.api.device_open(0, &d2), "device_open (a second device)");
                     tgl_buffer b = 0;
                     k.d.check(k.api.buffer_alloc(d2, 1024, &b), "buffer_alloc on the second device");
                     k.d.check(k.api.device_close(d2), "device_close");
                     return k.add(with(k.a.desc(), [&](tgl_tensor& t) { t.buffer = b; }), k.b.desc(), k.y.desc());
                 }});
    c.push_back({"BufferOfAnotherDevice", TGL_ERROR_INVALID_HANDLE, {"inputs[1]"}, [](Ctx& k) {
                     tgl_device d2 = 0;
                     if (k.api.device_open(0, &d2) != TGL_OK) {
                         k.skip = "the plugin does not open device 0 twice: " + plug().last_error();
                         return tgl_status(TGL_OK);
                     }
                     tgl_buffer b = 0;
                     k.d.check(k.api.buffer_alloc(d2, 1024, &b), "buffer_alloc on the second device");
                     tgl_status st = k.add(k.a.desc(), with(k.b.desc(), [&](tgl_tensor& t) { t.buffer = b; }), k.y.desc());
                     k.message = plug().last_error();  // before device_close resets it
                     k.d.check(k.api.device_close(d2), "device_close");
                     return st;
                 }});
    // ---- dtypes
    c.push_back({"DtypeMismatchInput", TGL_ERROR_DTYPE_MISMATCH, {"inputs[1]"}, [](Ctx& k) {
                     return k.add(k.a.desc(), with(k.b.desc(), [](tgl_tensor& t) { t.dtype = TGL_DTYPE_I32; }), k.y.desc());
                 }});
    c.push_back({"DtypeMismatchOutput", TGL_ERROR_DTYPE_MISMATCH, {"outputs[0]"}, [](Ctx& k) {
                     return k.add(k.a.desc(), k.b.desc(), with(k.y.desc(), [](tgl_tensor& t) { t.dtype = TGL_DTYPE_F16; }));
                 }});
    c.push_back({"UnknownDtype", TGL_ERROR_INVALID_ARGUMENT, {"inputs[0]", "dtype"}, [](Ctx& k) {
                     return k.add(with(k.a.desc(), [](tgl_tensor& t) { t.dtype = 99; }), k.b.desc(), k.y.desc());
                 }});
    // ---- ranks and sizes
    c.push_back({"Rank9", TGL_ERROR_RANK_TOO_LARGE, {"inputs[0]"}, [](Ctx& k) {
                     return k.add(with(k.a.desc(), [](tgl_tensor& t) { t.rank = 9; }), k.b.desc(), k.y.desc());
                 }});
    c.push_back({"Rank9Output", TGL_ERROR_RANK_TOO_LARGE, {"outputs[0]"}, [](Ctx& k) {
                     return k.add(k.a.desc(), k.b.desc(), with(k.y.desc(), [](tgl_tensor& t) { t.rank = 9; }));
                 }});
    c.push_back({"ElementCountOverflows", TGL_ERROR_SIZE_OVERFLOW, {"inputs[0]"}, [](Ctx& k) {
                     return k.add(with(k.a.desc(), [](tgl_tensor& t) {
                                      t.rank = 3;
                                      t.shape[0] = t.shape[1] = int64_t(1) << 32;
                                      t.shape[2] = 3;
                                      t.strides[0] = t.strides[1] = t.strides[2] = 0;
                                  }),
                                  k.b.desc(), k.y.desc());
                 }});
    c.push_back({"ByteCountOverflows", TGL_ERROR_SIZE_OVERFLOW, {"inputs[0]"}, [](Ctx& k) {
                     // 2^62 f32 elements = 2^64 bytes, even though the element count fits.
                     return k.add(with(k.a.desc(), [](tgl_tensor& t) {
                                      t.rank = 2;
                                      t.shape[0] = int64_t(1) << 62;
                                      t.shape[1] = 1;
                                      t.strides[0] = t.strides[1] = 0;
                                  }),
                                  k.b.desc(), k.y.desc());
                 }});
    c.push_back({"OverflowWithEmptyDim", TGL_ERROR_SIZE_OVERFLOW, {"inputs[0]"}, [](Ctx& k) {
                     // A zero dim does not excuse the other dims' overflow.
                     return k.add(with(k.a.desc(), [](tgl_tensor& t) {
                                      t.rank = 3;
                                      t.shape[0] = t.shape[1] = int64_t(1) << 40;
                                      t.shape[2] = 0;
                                  }),
                                  k.b.desc(), k.y.desc());
                 }});
    c.push_back({"NegativeSize", TGL_ERROR_INVALID_ARGUMENT, {"inputs[0]", "negative"}, [](Ctx& k) {
                     return k.add(with(k.a.desc(), [](tgl_tensor& t) { t.shape[0] = -2; }), k.b.desc(), k.y.desc());
                 }});
    // ---- views against their buffers
    c.push_back({"ViewPastEndOfBuffer", TGL_ERROR_OUT_OF_BOUNDS, {"inputs[0]"}, [](Ctx& k) {
                     return k.add(with(k.a.desc(), [&](tgl_tensor& t) { t.byte_offset = k.a.buffer_bytes() - 8; }), k.b.desc(),
                                  k.y.desc());
                 }});
    c.push_back({"OutputViewPastEnd", TGL_ERROR_OUT_OF_BOUNDS, {"outputs[0]"}, [](Ctx& k) {
                     // stride 200 elements: the last element lies far beyond the 536-byte buffer.
                     return k.add(k.a.desc(), k.b.desc(), with(k.y.desc(), [](tgl_tensor& t) { t.strides[0] = 200; }));
                 }});
    c.push_back({"ByteOffsetBeyondBuffer", TGL_ERROR_OUT_OF_BOUNDS, {"inputs[1]"}, [](Ctx& k) {
                     return k.add(k.a.desc(), with(k.b.desc(), [](tgl_tensor& t) { t.byte_offset = uint64_t(1) << 62; }),
                                  k.y.desc());
                 }});
    c.push_back({"NegativeStrideBeforeStart", TGL_ERROR_OUT_OF_BOUNDS, {"inputs[0]"}, [](Ctx& k) {
                     // At byte offset 0, stride -3 reaches 12 bytes before the buffer.
                     return k.add(with(k.a.desc(), [](tgl_tensor& t) {
                                      t.byte_offset = 0;
                                      t.strides[0] = -3;
                                  }),
                                  k.b.desc(), k.y.desc());
                 }});
    c.push_back({"NegativeStrideOutputBeforeStart", TGL_ERROR_OUT_OF_BOUNDS, {"outputs[0]"}, [](Ctx& k) {
                     return k.add(k.a.desc(), k.b.desc(), with(k.y.desc(), [](tgl_tensor& t) {
                                      t.byte_offset = 4;
                                      t.strides[1] = -1;
                                  }));
                 }});
    c.push_back({"MisalignedByteOffset", TGL_ERROR_INVALID_ARGUMENT, {"inputs[0]", "byte_offset"}, [](Ctx& k) {
                     return k.add(with(k.a.desc(), [](tgl_tensor& t) { t.byte_offset += 2; }), k.b.desc(), k.y.desc());
                 }});
    c.push_back({"OutputStrideZero", TGL_ERROR_INVALID_ARGUMENT, {"outputs[0]"}, [](Ctx& k) {
                     return k.add(k.a.desc(), k.b.desc(), with(k.y.desc(), [](tgl_tensor& t) { t.strides[0] = 0; }));
                 }});
    // ---- operand counts
    c.push_back({"TooFewInputs", TGL_ERROR_INVALID_ARGUMENT, {"n_inputs"}, [](Ctx& k) {
                     tgl_tensor in[2] = {k.a.desc(), k.b.desc()};
                     tgl_tensor y = k.y.desc();
                     return k.api.run_op(k.d.handle(), TGL_OP_ADD, nullptr, in, 1, &y, 1);
                 }});
    c.push_back({"TooManyOutputs", TGL_ERROR_INVALID_ARGUMENT, {"n_outputs"}, [](Ctx& k) {
                     tgl_tensor in[2] = {k.a.desc(), k.b.desc()};
                     tgl_tensor y[2] = {k.y.desc(), k.r.desc()};
                     return k.api.run_op(k.d.handle(), TGL_OP_ADD, nullptr, in, 2, y, 2);
                 }});
    // ---- buffer calls
    c.push_back({"UploadPastEnd", TGL_ERROR_OUT_OF_BOUNDS, {"buffer"}, [](Ctx& k) {
                     float v[2] = {1, 2};
                     return k.api.buffer_upload(k.d.handle(), k.y.buffer(), k.y.buffer_bytes() - 4, v, 8);
                 }});
    c.push_back({"DownloadPastEnd", TGL_ERROR_OUT_OF_BOUNDS, {"buffer"}, [](Ctx& k) {
                     float v[2];
                     return k.api.buffer_download(k.d.handle(), k.y.buffer(), k.y.buffer_bytes() + 1, v, 0);
                 }});
    c.push_back({"UploadRangeOverflows", TGL_ERROR_SIZE_OVERFLOW, {"buffer"}, [](Ctx& k) {
                     float v = 1;
                     return k.api.buffer_upload(k.d.handle(), k.y.buffer(), UINT64_MAX - 1, &v, 4);
                 }});
    c.push_back({"FillBadPatternSize", TGL_ERROR_INVALID_ARGUMENT, {"pattern_size"}, [](Ctx& k) {
                     uint8_t p[3] = {1, 2, 3};
                     return k.api.buffer_fill(k.d.handle(), k.y.buffer(), 0, 12, p, 3);
                 }});
    c.push_back({"FillPatternSize32", TGL_ERROR_INVALID_ARGUMENT, {"pattern_size"}, [](Ctx& k) {
                     uint8_t p[32] = {};
                     return k.api.buffer_fill(k.d.handle(), k.y.buffer(), 0, 64, p, 32);
                 }});
    c.push_back({"FillMisalignedRange", TGL_ERROR_INVALID_ARGUMENT, {"pattern_size"}, [](Ctx& k) {
                     float p = 1;
                     return k.api.buffer_fill(k.d.handle(), k.y.buffer(), 2, 8, &p, 4);
                 }});
    c.push_back({"FillPastEnd", TGL_ERROR_OUT_OF_BOUNDS, {"buffer"}, [](Ctx& k) {
                     float p = 1;
                     return k.api.buffer_fill(k.d.handle(), k.y.buffer(), 0, k.y.buffer_bytes() + 4, &p, 4);
                 }});
    c.push_back({"OverlappingCopy", TGL_ERROR_INVALID_ARGUMENT, {"src", "dst", "overlap"}, [](Ctx& k) {
                     return k.api.buffer_copy(k.d.handle(), k.y.buffer(), 0, k.y.buffer(), 100, 200);
                 }});
    c.push_back({"CopyPastEndOfSource", TGL_ERROR_OUT_OF_BOUNDS, {"src"}, [](Ctx& k) {
                     return k.api.buffer_copy(k.d.handle(), k.a.buffer(), 8, k.y.buffer(), 0, k.a.buffer_bytes());
                 }});
    c.push_back({"CopyPastEndOfDestination", TGL_ERROR_OUT_OF_BOUNDS, {"dst"}, [](Ctx& k) {
                     return k.api.buffer_copy(k.d.handle(), k.a.buffer(), 0, k.y.buffer(), 8, k.y.buffer_bytes());
                 }});
    c.push_back({"AllocHuge", TGL_ERROR_RESOURCE_EXHAUSTED, {}, [](Ctx& k) {
                     tgl_buffer b = 0;
                     return k.api.buffer_alloc(k.d.handle(), uint64_t(1) << 62, &b);
                 }});
    // ---- outputs that overlap themselves (two elements at one address): rejected for every op,
    // naming the output, its shape and strides. y (2, 3) with strides (1, 1) writes elements
    // 0 1 2 / 1 2 3; with strides (2, 1): 0 1 2 / 2 3 4.
    auto self_overlap = [](tgl_tensor t, std::vector<int64_t> shape, std::vector<int64_t> strides) {
        t.rank = uint32_t(shape.size());
        for (size_t i = 0; i < shape.size(); ++i) {
            t.shape[i] = shape[i];
            t.strides[i] = strides[i];
        }
        return t;
    };
    const std::vector<std::string> y_tokens = {"outputs[0] (y)", "overlaps itself", "(2, 3)", "(1, 1)"};
    c.push_back({"BinaryOutputOverlapsItself", TGL_ERROR_INVALID_ARGUMENT, y_tokens, [=](Ctx& k) {
                     return k.add(k.a.desc(), k.b.desc(), self_overlap(k.y.desc(), {2, 3}, {1, 1}));
                 }});
    c.push_back({"UnaryOutputOverlapsItselfByOneRow", TGL_ERROR_INVALID_ARGUMENT,
                 {"outputs[0] (y)", "overlaps itself", "(2, 3)", "(2, 1)"}, [=](Ctx& k) {
                     tgl_tensor x = k.a.desc(), y = self_overlap(k.y.desc(), {2, 3}, {2, 1});
                     return k.api.run_op(k.d.handle(), TGL_OP_NEG, nullptr, &x, 1, &y, 1);
                 }});
    c.push_back({"UnaryOutputOverlapsItselfNegativeStride", TGL_ERROR_INVALID_ARGUMENT,
                 {"outputs[0] (y)", "overlaps itself", "(2, 3)", "(-1, 1)"}, [=](Ctx& k) {
                     tgl_tensor x = k.a.desc(), y = self_overlap(k.y.desc(), {2, 3}, {-1, 1});
                     y.byte_offset += 4;  // element (1, 0) at the start of the storage
                     return k.api.run_op(k.d.handle(), TGL_OP_NEG, nullptr, &x, 1, &y, 1);
                 }});
    c.push_back({"ReduceOutputOverlapsItself", TGL_ERROR_INVALID_ARGUMENT, y_tokens, [=](Ctx& k) {
                     // x (2, 3, 1) summed over its last axis into y (2, 3).
                     tgl_tensor x = self_overlap(k.x.desc(), {2, 3, 1}, {3, 1, 1});
                     tgl_tensor y = self_overlap(k.y.desc(), {2, 3}, {1, 1});
                     tgl_reduce_params p = reduce_params({2}, false);
                     return k.api.run_op(k.d.handle(), TGL_OP_SUM, &p, &x, 1, &y, 1);
                 }});
    c.push_back({"MatmulOutputOverlapsItself", TGL_ERROR_INVALID_ARGUMENT, {"outputs[0] (C)", "overlaps itself", "(2, 2)", "(1, 1)"},
                 [=](Ctx& k) { return k.matmul(k.A.desc(), k.B.desc(), self_overlap(k.C.desc(), {2, 2}, {1, 1}), &k.mp); }});
    c.push_back({"ContiguousOutputOverlapsItself", TGL_ERROR_INVALID_ARGUMENT, y_tokens, [=](Ctx& k) {
                     tgl_tensor x = k.x.desc(), y = self_overlap(k.y.desc(), {2, 3}, {1, 1});
                     return k.api.run_op(k.d.handle(), TGL_OP_CONTIGUOUS, nullptr, &x, 1, &y, 1);
                 }});
    c.push_back({"FlipOutputOverlapsItself", TGL_ERROR_INVALID_ARGUMENT, y_tokens, [=](Ctx& k) {
                     tgl_tensor x = k.x.desc(), y = self_overlap(k.y.desc(), {2, 3}, {1, 1});
                     tgl_flip_params p{};
                     p.struct_size = sizeof p;
                     p.n_axes = 1;
                     p.axes[0] = 1;
                     return k.api.run_op(k.d.handle(), TGL_OP_FLIP, &p, &x, 1, &y, 1);
                 }});
    c.push_back({"GatherOutputOverlapsItself", TGL_ERROR_INVALID_ARGUMENT, y_tokens, [=](Ctx& k) {
                     tgl_tensor in[2] = {k.x.desc(), k.I.desc()};
                     tgl_tensor y = self_overlap(k.y.desc(), {2, 3}, {1, 1});
                     tgl_axis_params p{sizeof p, 1, 0};
                     return k.api.run_op(k.d.handle(), TGL_OP_GATHER, &p, in, 2, &y, 1);
                 }});
    c.push_back({"SoftmaxOutputOverlapsItself", TGL_ERROR_INVALID_ARGUMENT, y_tokens, [=](Ctx& k) {
                     tgl_tensor in[2] = {k.x.desc(), tgl_tensor{}};  // no mask
                     tgl_tensor y = self_overlap(k.y.desc(), {2, 3}, {1, 1});
                     return k.api.run_op(k.d.handle(), TGL_OP_SOFTMAX, nullptr, in, 2, &y, 1);
                 }});
    c.push_back({"FullOutputOverlapsItself", TGL_ERROR_INVALID_ARGUMENT, y_tokens, [=](Ctx& k) {
                     tgl_tensor y = self_overlap(k.y.desc(), {2, 3}, {1, 1});
                     tgl_full_params p{sizeof p, 0, 7.0};
                     return k.api.run_op(k.d.handle(), TGL_OP_FULL, &p, nullptr, 0, &y, 1);
                 }});
    c.push_back({"ArgmaxOutputOverlapsItself", TGL_ERROR_INVALID_ARGUMENT, y_tokens, [=](Ctx& k) {
                     // x (2, 3, 1), argmax over its last axis into an i32 y (2, 3) over I's buffer.
                     tgl_tensor x = self_overlap(k.x.desc(), {2, 3, 1}, {3, 1, 1});
                     tgl_tensor y = self_overlap(k.I.desc(), {2, 3}, {1, 1});
                     tgl_arg_reduce_params p{sizeof p, 2, 0, 0, 0};
                     return k.api.run_op(k.d.handle(), TGL_OP_ARGMAX, &p, &x, 1, &y, 1);
                 }});
    return c;
}

// Checks TGL-P-9 (params sizes) and TGL-P-11 (plugin_api.h, plugin rules). The family files
// instantiate it with their own cases.
TEST_P(BadInput, RejectedWithoutSideEffects) {
    const BadCase& bc = GetParam();
    Ctx k;
    tgl_status s = bc.call(k);
    std::string message = plug().last_error();
    const std::string failed = message;
    if (!k.skip.empty()) GTEST_SKIP() << k.skip;
    if (!k.message.empty()) message = k.message;
    EXPECT_TRUE(is_error(s, bc.want, message, bc.tokens));
    // The message of this thread stays until its next failing call: successful calls keep it.
    k.expect_untouched();
    k.expect_device_works();
    const char* after = plug().api().last_error_message();
    ASSERT_NE(after, nullptr);
    EXPECT_EQ(std::string(after), failed) << "a successful call must leave the thread's message as it was";
}

INSTANTIATE_TEST_SUITE_P(Conformance, BadInput, ::testing::ValuesIn(bad_cases()), bad_case_name);

}  // namespace
}  // namespace conf
