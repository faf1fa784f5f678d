// The ABI contract: function table, plugin info, devices and their properties, capability query,
// unimplemented and unknown ops.
#include "common.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>

namespace conf {
namespace {

struct ImplementedOp {
    tgl_op op;
    const char* name;
    uint32_t n_inputs;
    uint32_t params_size;
};

const std::vector<ImplementedOp>& implemented_ops() {
    static const std::vector<ImplementedOp> ops = {
        {TGL_OP_ABS, "abs", 1, sizeof(tgl_unary_params)},
        {TGL_OP_NEG, "neg", 1, sizeof(tgl_unary_params)},
        {TGL_OP_RELU, "relu", 1, sizeof(tgl_unary_params)},
        {TGL_OP_SIGMOID, "sigmoid", 1, sizeof(tgl_unary_params)},
        {TGL_OP_TANH, "tanh", 1, sizeof(tgl_unary_params)},
        {TGL_OP_EXP, "exp", 1, sizeof(tgl_unary_params)},
        {TGL_OP_LOG, "log", 1, sizeof(tgl_unary_params)},
        {TGL_OP_SQRT, "sqrt", 1, sizeof(tgl_unary_params)},
        {TGL_OP_GELU, "gelu", 1, sizeof(tgl_gelu_params)},
        {TGL_OP_SILU, "silu", 1, sizeof(tgl_unary_params)},
        {TGL_OP_ADD, "add", 2, sizeof(tgl_binary_params)},
        {TGL_OP_SUB, "sub", 2, sizeof(tgl_binary_params)},
        {TGL_OP_MUL, "mul", 2, sizeof(tgl_binary_params)},
        {TGL_OP_DIV, "div", 2, sizeof(tgl_binary_params)},
        {TGL_OP_MAXIMUM, "maximum", 2, sizeof(tgl_binary_params)},
        {TGL_OP_MINIMUM, "minimum", 2, sizeof(tgl_binary_params)},
        {TGL_OP_POW, "pow", 2, sizeof(tgl_binary_params)},
        {TGL_OP_SUM, "sum", 1, sizeof(tgl_reduce_params)},
        {TGL_OP_MEAN, "mean", 1, sizeof(tgl_reduce_params)},
        {TGL_OP_MAX, "max", 1, sizeof(tgl_reduce_params)},
        {TGL_OP_MIN, "min", 1, sizeof(tgl_reduce_params)},
        {TGL_OP_PROD, "prod", 1, sizeof(tgl_reduce_params)},
        {TGL_OP_MATMUL, "matmul", 2, sizeof(tgl_matmul_params)},
    };
    return ops;
}

// Every id of the catalogue that ABI 1.0 reserves for later.
const std::vector<tgl_op>& planned_ops() {
    static const std::vector<tgl_op> ops = {
        };
    return ops;
}

tgl_op_caps query(tgl_op op, tgl_status* status) {
    tgl_op_caps caps;
    std::memset(&caps, 0xCD, sizeof caps);
    caps.struct_size = sizeof caps;
    *status = plug().api().query_op(op, &caps);
    return caps;
}

using AbiTest = ConformanceTest;

TEST_F(AbiTest, FunctionTableHasV10SizeVersionAndEveryFunction) {
    const tgl_plugin_api& api = plug().api();
    EXPECT_GE(api.struct_size, uint64_t(TGL_PLUGIN_API_SIZE_V1_0));
    EXPECT_EQ(api.abi_major, uint32_t(TGL_ABI_MAJOR));
    EXPECT_GE(api.abi_minor, 0u);
    const void* fns[] = {(void*)api.last_error_message, (void*)api.get_plugin_info, (void*)api.device_count,
                         (void*)api.device_properties, (void*)api.device_open, (void*)api.device_close,
                         (void*)api.buffer_alloc, (void*)api.buffer_free, (void*)api.buffer_size,
                         (void*)api.buffer_upload, (void*)api.buffer_download, (void*)api.buffer_copy,
                         (void*)api.buffer_fill, (void*)api.query_op, (void*)api.run_op, (void*)api.synchronize};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; ++i) EXPECT_NE(fns[i], nullptr) << "function #" << i;
    EXPECT_EQ(tgl_plugin_get_api(plug().raw()), &api);
}

TEST_F(AbiTest, PluginInfoNamesTheVersionsAndNegotiatedMinor) {
    const tgl_plugin_api& api = plug().api();
    tgl_plugin_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    ASSERT_EQ(api.get_plugin_info(&info), TGL_OK) << plug().last_error();
    EXPECT_EQ(info.struct_size, sizeof info);
    EXPECT_EQ(info.abi_major, uint32_t(TGL_ABI_MAJOR));
    EXPECT_EQ(info.abi_minor, api.abi_minor);
    EXPECT_EQ(info.negotiated_minor, std::min<uint32_t>(TGL_ABI_MINOR, info.abi_minor));
    EXPECT_EQ(info.negotiated_minor, tgl_plugin_abi_minor(plug().raw()));
    ASSERT_NE(info.name, nullptr);
    ASSERT_NE(info.version, nullptr);
    ASSERT_NE(info.description, nullptr);
    EXPECT_STRNE(info.name, "");
    EXPECT_EQ(std::string(info.name), plug().name());
    EXPECT_TRUE(std::regex_match(info.version, std::regex(R"(\d+\.\d+\.\d+([-+].*)?)")))
        << "version '" << info.version << "' is not semver";
    EXPECT_STRNE(info.description, "");
    // A successful call leaves an empty message, never NULL.
    const char* m = api.last_error_message();
    ASSERT_NE(m, nullptr);
    EXPECT_STREQ(m, "");
}

TEST_F(AbiTest, AtLeastOneDeviceWithProperties) {
    const tgl_plugin_api& api = plug().api();
    uint32_t count = 0;
    ASSERT_EQ(api.device_count(&count), TGL_OK) << plug().last_error();
    ASSERT_GE(count, 1u) << "plugin '" << plug().name() << "' reports no device";
    for (uint32_t i = 0; i < count; ++i) {
        const tgl_property* props = nullptr;
        uint32_t n = 0;
        ASSERT_EQ(api.device_properties(i, &props, &n), TGL_OK) << plug().last_error();
        ASSERT_GT(n, 0u);
        ASSERT_NE(props, nullptr);
        std::map<std::string, std::string> m;
        for (uint32_t k = 0; k < n; ++k) {
            ASSERT_NE(props[k].name, nullptr) << "property #" << k;
            ASSERT_NE(props[k].value, nullptr) << "property " << props[k].name;
            EXPECT_TRUE(m.emplace(props[k].name, props[k].value).second) << "property " << props[k].name << " repeats";
        }
        std::string listing;
        for (auto& kv : m) listing += "\n  " + kv.first + " = " + kv.second;
        SCOPED_TRACE("device " + std::to_string(i) + " properties:" + listing);
        std::printf("[  DEVICE  ] %u: %s | %s\n", i, m["renderer"].c_str(), m["api.version"].c_str());
        for (const char* key : {"name", "renderer", "api.version"}) {
            ASSERT_TRUE(m.count(key)) << "property '" << key << "' is missing";
            EXPECT_FALSE(m[key].empty()) << "property '" << key << "' is empty";
        }
        ASSERT_TRUE(m.count("limit.max_rank")) << "property 'limit.max_rank' is missing";
        EXPECT_EQ(m["limit.max_rank"], std::to_string(TGL_MAX_RANK));
        int limits = 0;
        for (auto& kv : m) {
            if (kv.first.compare(0, 6, "limit.") != 0 && kv.first != "memory.bytes") continue;
            ++limits;
            EXPECT_TRUE(std::regex_match(kv.second, std::regex(R"(\d+)")))
                << kv.first << " = '" << kv.second << "' is not a decimal number";
        }
        EXPECT_GE(limits, 2) << "expected device limits (limit.*)";
        // The loader's convenience accessor sees the same values.
        const char* r = tgl_device_property(plug().raw(), i, "renderer");
        ASSERT_NE(r, nullptr);
        EXPECT_EQ(std::string(r), m["renderer"]);
    }
    // Properties of a device that does not exist.
    const tgl_property* props = nullptr;
    uint32_t n = 0;
    EXPECT_TGL_ERROR(api.device_properties(count + 1000, &props, &n), TGL_ERROR_DEVICE_UNAVAILABLE,
                     {std::to_string(count + 1000)});
    tgl_device d = 0;
    EXPECT_TGL_ERROR(api.device_open(count + 1000, &d), TGL_ERROR_DEVICE_UNAVAILABLE, {std::to_string(count + 1000)});
}

TEST_F(AbiTest, EveryImplementedOpIsSupportedForF32WithFlags) {
    for (const ImplementedOp& op : implemented_ops()) {
        SCOPED_TRACE(op.name);
        tgl_status s;
        tgl_op_caps caps = query(op.op, &s);
        ASSERT_EQ(s, TGL_OK) << plug().last_error();
        EXPECT_EQ(caps.struct_size, sizeof caps);
        EXPECT_EQ(caps.op, op.op);
        ASSERT_NE(caps.name, nullptr);
        EXPECT_STREQ(caps.name, op.name);
        EXPECT_EQ(caps.supported, 1u);
        EXPECT_EQ(caps.n_inputs, op.n_inputs);
        EXPECT_EQ(caps.n_outputs, 1u);
        EXPECT_EQ(caps.max_rank, uint32_t(TGL_MAX_RANK));
        EXPECT_EQ(caps.params_size, op.params_size);
        for (uint32_t i = 0; i < op.n_inputs; ++i)
            EXPECT_TRUE(caps.input_dtypes[i] & TGL_DTYPE_BIT(TGL_DTYPE_F32)) << "input " << i << " mask 0x" << std::hex
                                                                            << caps.input_dtypes[i];
        for (uint32_t i = op.n_inputs; i < TGL_MAX_OP_INPUTS; ++i) EXPECT_EQ(caps.input_dtypes[i], 0u) << "input " << i;
        EXPECT_TRUE(caps.output_dtypes[0] & TGL_DTYPE_BIT(TGL_DTYPE_F32));
        for (uint32_t i = 1; i < TGL_MAX_OP_OUTPUTS; ++i) EXPECT_EQ(caps.output_dtypes[i], 0u) << "output " << i;
        const uint32_t all = TGL_CAP_STRIDED | TGL_CAP_BROADCAST | TGL_CAP_STRIDED_OUTPUT;
        EXPECT_EQ(caps.flags & all, all) << "flags 0x" << std::hex << caps.flags
                                         << ": every op accepts strided, broadcast inputs and strided outputs";
    }
}

TEST_F(AbiTest, PlannedOpsAreUnsupportedAndRunOpSaysUnimplemented) {
    for (tgl_op op : planned_ops()) {
        SCOPED_TRACE("op id " + std::to_string(op));
        tgl_status s;
        tgl_op_caps caps = query(op, &s);
        ASSERT_EQ(s, TGL_OK) << plug().last_error();
        EXPECT_EQ(caps.supported, 0u);
        EXPECT_EQ(caps.op, op);
        ASSERT_NE(caps.name, nullptr);
        EXPECT_STRNE(caps.name, "");
    }
    // run_op of a planned op: UNIMPLEMENTED, naming the op (checked before its operands).
    DeviceTensor x(dev(), contiguous({4})), y(dev(), contiguous({4}));
    x.set_values({1, 2, 3, 4});
    y.poison();
    tgl_tensor in = x.desc(), out = y.desc();
    EXPECT_TRUE(y.unchanged());
    EXPECT_TRUE(x.unchanged());
}

TEST_F(AbiTest, UnknownOpIdsAreRejected) {
    for (tgl_op op : {tgl_op(99999), tgl_op(TGL_OP_INVALID), tgl_op(199), tgl_op(0xFFFFFFFFu)}) {
        SCOPED_TRACE("op id " + std::to_string(op));
        tgl_op_caps caps;
        std::memset(&caps, 0, sizeof caps);
        caps.struct_size = sizeof caps;
        EXPECT_TGL_ERROR(plug().api().query_op(op, &caps), TGL_ERROR_UNKNOWN_OP, {std::to_string(op)});
        DeviceTensor x(dev(), contiguous({2})), y(dev(), contiguous({2}));
        x.set_values({1, 2});
        y.poison();
        tgl_tensor in = x.desc(), out = y.desc();
        EXPECT_TGL_ERROR(plug().api().run_op(dev().handle(), op, nullptr, &in, 1, &out, 1), TGL_ERROR_UNKNOWN_OP,
                         {std::to_string(op)});
        EXPECT_TRUE(y.unchanged());
    }
}

TEST_F(AbiTest, QueryOpChecksItsArguments) {
    EXPECT_TGL_ERROR(plug().api().query_op(TGL_OP_ADD, nullptr), TGL_ERROR_NULL_POINTER, {"caps"});
    tgl_op_caps caps;
    std::memset(&caps, 0, sizeof caps);
    caps.struct_size = 8;
    EXPECT_TGL_ERROR(plug().api().query_op(TGL_OP_ADD, &caps), TGL_ERROR_PARAMS_SIZE, {"struct_size"});
    tgl_plugin_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = 4;
    EXPECT_TGL_ERROR(plug().api().get_plugin_info(&info), TGL_ERROR_PARAMS_SIZE, {"struct_size"});
}

// An op run with a dtype its capability mask does not include is a DTYPE_MISMATCH naming the dtype
// (not a crash, not a silent reinterpretation), and the output stays untouched.
TEST_F(AbiTest, DtypeOutsideTheCapabilityIsRejected) {
    int tested = 0;
    for (tgl_op op : {tgl_op(TGL_OP_ADD), tgl_op(TGL_OP_EXP), tgl_op(TGL_OP_SUM), tgl_op(TGL_OP_MATMUL)}) {
        tgl_status s;
        tgl_op_caps caps = query(op, &s);
        ASSERT_EQ(s, TGL_OK);
        for (tgl_dtype dt : {tgl_dtype(TGL_DTYPE_F16), tgl_dtype(TGL_DTYPE_BF16), tgl_dtype(TGL_DTYPE_I32)}) {
            if (caps.input_dtypes[0] & TGL_DTYPE_BIT(dt)) continue;
            SCOPED_TRACE(std::string(caps.name) + " with dtype " + std::to_string(dt));
            ++tested;
            DeviceTensor a(dev(), contiguous({2, 2})), b(dev(), contiguous({2, 2}));
            DeviceTensor y(dev(), contiguous(op == TGL_OP_SUM ? Shape{1, 1} : Shape{2, 2}));
            a.set_values({1, 2, 3, 4});
            b.set_values({1, 2, 3, 4});
            y.poison();
            std::vector<tgl_tensor> in = {a.desc(), b.desc()};
            tgl_tensor out = y.desc();
            for (auto& t : in) t.dtype = dt;
            out.dtype = dt;
            tgl_reduce_params rp = reduce_params({}, true);
            const void* params = op == TGL_OP_SUM ? &rp : nullptr;
            uint32_t n_in = caps.n_inputs;
            std::string dtname = dt == TGL_DTYPE_F16 ? "f16" : dt == TGL_DTYPE_BF16 ? "bf16" : "i32";
            EXPECT_TGL_ERROR(plug().api().run_op(dev().handle(), op, params, in.data(), n_in, &out, 1),
                             TGL_ERROR_DTYPE_MISMATCH, {dtname, "takes"});
            EXPECT_TRUE(y.unchanged());
        }
    }
    if (!tested) GTEST_SKIP() << "the plugin implements f16, bf16 and i32 for every op tried";
}

}  // namespace
}  // namespace conf
