// Running one op with any number of operands of any dtype, optional operands absent, on guarded
// device tensors: inputs uploaded and checked unchanged afterwards, outputs poisoned (or prefilled)
// and checked for guard and gap bytes when read. Shared by the conformance and differential suites
// for the ops whose operands are not "one f32 output" (norms with gamma/beta, multi-output ops,
// index tensors, generators without inputs).
#pragma once

#include "tgl_test/support.h"

#include <memory>
#include <string>
#include <vector>

namespace tgl_test {

// An input operand: a view of `storage` (storage.size() >= view.storage elements of `dtype`).
// absent: an optional operand left out (a descriptor with buffer handle 0).
struct InputArg {
    tgl_dtype dtype = TGL_DTYPE_F32;
    View view;
    Storage storage;
    bool absent = false;
};

// An output operand. init: logical values it starts with (scatter into y = x in place aside, ops
// that read their output); empty: poisoned. absent: an optional output left out.
struct OutputArg {
    tgl_dtype dtype = TGL_DTYPE_F32;
    View view;
    std::vector<double> init;
    bool absent = false;
};

// Contiguous input with the given logical values.
inline InputArg input_values(tgl_dtype dt, const Shape& shape, const std::vector<double>& values) {
    InputArg a;
    a.dtype = dt;
    a.view = contiguous(shape);
    a.storage = Storage::from_values(dt, values);
    return a;
}
// An input with a dim of 0: no values, its storage as large as the view asks for (one element).
inline InputArg empty_input(tgl_dtype dt, const Shape& shape) {
    InputArg a;
    a.dtype = dt;
    a.view = contiguous(shape);
    a.storage = Storage::zeros(dt, a.view.storage);
    return a;
}
inline InputArg absent_input() {
    InputArg a;
    a.absent = true;
    return a;
}
inline OutputArg output_of(tgl_dtype dt, const Shape& shape) {
    OutputArg o;
    o.dtype = dt;
    o.view = contiguous(shape);
    return o;
}
inline OutputArg absent_output() {
    OutputArg o;
    o.absent = true;
    return o;
}

// The tensors of one call on one device, kept alive so that a test can look at them afterwards.
class OpCall {
public:
    OpCall(Device& device, const std::vector<InputArg>& inputs, const std::vector<OutputArg>& outputs)
        : device_(device) {
        for (const InputArg& a : inputs) {
            if (a.absent) {
                in_.push_back(nullptr);
                continue;
            }
            in_.push_back(std::make_unique<DeviceTensor>(device, a.view, a.dtype));
            in_.back()->set_storage(a.storage);
        }
        for (const OutputArg& o : outputs) {
            if (o.absent) {
                out_.push_back(nullptr);
                continue;
            }
            out_.push_back(std::make_unique<DeviceTensor>(device, o.view, o.dtype));
            if (o.init.empty()) out_.back()->poison();
            else out_.back()->prefill_logical(o.init);
        }
    }

    std::vector<tgl_tensor> input_descs() const { return descs(in_); }
    std::vector<tgl_tensor> output_descs() const { return descs(out_); }

    // run_op's status (the message is the plugin's last_error() on this thread).
    tgl_status run(tgl_op op, const void* params) {
        return device_.run(op, params, input_descs(), output_descs());
    }

    // Logical values of every present output (guards and gaps checked; poison checked where
    // detectable), then every input checked unchanged. Absent outputs give an empty vector.
    std::vector<std::vector<double>> read() {
        std::vector<std::vector<double>> ys;
        for (auto& o : out_) ys.push_back(o ? o->read_logical() : std::vector<double>{});
        check_inputs_unchanged();
        return ys;
    }

    // After a rejected call: every tensor, inputs and outputs, exactly as before it.
    ::testing::AssertionResult all_unchanged() {
        for (size_t i = 0; i < in_.size(); ++i)
            if (in_[i]) {
                ::testing::AssertionResult r = in_[i]->unchanged();
                if (!r) return ::testing::AssertionFailure() << "input " << i << " changed: " << r.message();
            }
        for (size_t i = 0; i < out_.size(); ++i)
            if (out_[i]) {
                ::testing::AssertionResult r = out_[i]->unchanged();
                if (!r) return ::testing::AssertionFailure() << "output " << i << " changed: " << r.message();
            }
        return ::testing::AssertionSuccess();
    }

    DeviceTensor* input(size_t i) { return in_.at(i).get(); }
    DeviceTensor* output(size_t i) { return out_.at(i).get(); }

private:
    static std::vector<tgl_tensor> descs(const std::vector<std::unique_ptr<DeviceTensor>>& ts) {
        std::vector<tgl_tensor> d;
        for (const auto& t : ts) {
            if (t) {
                d.push_back(t->desc());
            } else {
                tgl_tensor none{};  // buffer 0: absent
                d.push_back(none);
            }
        }
        return d;
    }
    void check_inputs_unchanged() {
        for (size_t i = 0; i < in_.size(); ++i) {
            if (!in_[i]) continue;
            ::testing::AssertionResult r = in_[i]->unchanged();
            if (!r) throw Failure("input " + std::to_string(i) + " was modified by the op: " + r.message());
        }
    }

    Device& device_;
    std::vector<std::unique_ptr<DeviceTensor>> in_;
    std::vector<std::unique_ptr<DeviceTensor>> out_;
};

// Runs op and returns every output's logical values; throws Failure (naming the plugin, status and
// message) if run_op fails.
inline std::vector<std::vector<double>> run_op_values(Device& device, tgl_op op, const void* params,
                                                      const std::vector<InputArg>& inputs,
                                                      const std::vector<OutputArg>& outputs) {
    OpCall call(device, inputs, outputs);
    tgl_status s = call.run(op, params);
    if (s != TGL_OK)
        throw Failure("plugin '" + device.plugin().name() + "' failed op " + std::to_string(op) + ": " +
                      tgl_status_name(s) + ": " + device.plugin().last_error());
    return call.read();
}

}  // namespace tgl_test
