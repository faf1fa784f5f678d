// What a plugin implements. plugin_frame.cpp turns a Backend into the C function table: it owns
// the handle tables, checks every argument (validate.h) and catches every exception, so a
// backend only ever sees valid, resolved requests.
#pragma once

#include "handle_table.h"
#include "validate.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tgl {

class DeviceBuffer {
public:
    explicit DeviceBuffer(uint64_t bytes) : size_(bytes) {}
    virtual ~DeviceBuffer() = default;
    uint64_t size() const { return size_; }

private:
    uint64_t size_;
};

using BufferRef = std::shared_ptr<DeviceBuffer>;

// One open device. Calls may come from several host threads at once; ranges are already checked.
class Device {
public:
    virtual ~Device() = default;
    virtual BufferRef alloc(uint64_t bytes) = 0;
    virtual void upload(const BufferRef& dst, uint64_t offset, const void* src, uint64_t bytes) = 0;
    virtual void download(const BufferRef& src, uint64_t offset, void* dst, uint64_t bytes) = 0;
    virtual void copy(const BufferRef& src, uint64_t src_offset, const BufferRef& dst,
                      uint64_t dst_offset, uint64_t bytes) = 0;
    // pattern_size is 1, 2, 4, 8 or 16 and divides offset and bytes.
    virtual void fill(const BufferRef& dst, uint64_t offset, uint64_t bytes, const void* pattern,
                      uint32_t pattern_size) = 0;
    // call is validated, not a no-op, and its dtype is one the backend declared for the op.
    virtual void run(const OpCall& call) = 0;
    virtual void synchronize() = 0;
    // device_close's wait: synchronize, and also a failure of queued work that was kept for a
    // host thread which has not waited since (plugin_api.h, device_close).
    virtual void synchronize_for_close() { synchronize(); }
    // ABI 1.1 timer (plugin_api.h, timer_begin/timer_end); the frame checks that regions pair up.
    // Default: no timer (TGL_ERROR_UNIMPLEMENTED).
    virtual void timer_begin();
    // Elapsed nanoseconds of the region; *flags gets TGL_TIMER_* bits.
    virtual uint64_t timer_end(uint32_t* flags);
    // ABI 1.2 graphs (plugin_api.h, graph_begin ... graph_destroy). The frame owns the handles and
    // the recording state; a device provides:
    //   record(call): what run(call) would queue, planned now but not queued (call is validated and
    //     not a no-op, as for run). Buffers and internal memory it uses stay held by the result.
    //   replay(ops): queues the recorded ops in order, as run would have queued them.
    class RecordedOp {
    public:
        virtual ~RecordedOp() = default;
    };
    using RecordedOps = std::shared_ptr<const std::vector<std::shared_ptr<RecordedOp>>>;
    virtual std::shared_ptr<RecordedOp> record(const OpCall& call) = 0;
    virtual void replay(const RecordedOps& ops) = 0;
    //   plan_graph(calls, ops): the ops to replay for a whole graph (at graph_end, and for
    //     graph_replay_with's ops with its bindings applied), where calls[i] is what ops[i] recorded
    //     (its params pointer is null: what the op needs of them is in its plan). A device may
    //     replace runs of ops by fewer (fusion); the replay must give the same results, in every
    //     buffer, as replaying `ops`. Default: `ops` unchanged.
    virtual RecordedOps plan_graph(const std::vector<const OpCall*>& calls, const RecordedOps& ops) {
        (void)calls;
        return ops;
    }
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual const char* name() const = 0;
    virtual const char* version() const = 0;
    virtual const char* description() const = 0;
    virtual uint32_t device_count() = 0;
    // Why there are no more devices than device_count() (e.g. what the EGL probe found); may be empty.
    virtual std::string device_count_note() { return {}; }
    virtual const std::vector<tgl_property>& device_properties(uint32_t index) = 0;
    virtual std::shared_ptr<Device> open_device(uint32_t index) = 0;
    // TGL_CAP_* flags for an implemented op. Default: any strides, broadcasting, strided outputs.
    virtual uint32_t op_flags(tgl_op) const {
        return TGL_CAP_STRIDED | TGL_CAP_BROADCAST | TGL_CAP_STRIDED_OUTPUT;
    }
    // Handle tag byte, so handles of different plugins never look alike.
    virtual uint8_t handle_tag() const = 0;
};

// Builds the function table around `backend` (which lives for the rest of the process) and
// records the host's ABI minor. Used by each plugin's tgl_plugin_init_v1.
tgl_status plugin_init(Backend& backend, uint32_t host_abi_minor, const tgl_plugin_api** out);

}  // namespace tgl
