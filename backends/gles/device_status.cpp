// Device status of the GLES device: waiting for the GPU within the time limit (and noticing a
// lost context), and the device-side error words (glsl/device_status.glsl) that ops with a
// device check write: their sequence numbers, reading and clearing them after each wait.
#include "gles_device.h"

#include "status.h"

#include <chrono>
#include <cstring>

namespace tgl {
namespace gles {

// A fence (no glFinish), waited for at most the time limit; then the reset check.
void GlesDevice::wait_idle(const char* what) {
    GLsync sync = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    if (!sync) fail(TGL_ERROR_BACKEND_FAILURE, "%s: glFenceSync failed", what);
    const uint32_t limit = gl_->timeout_ms();
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        GLenum r = glClientWaitSync(sync, GL_SYNC_FLUSH_COMMANDS_BIT, 100000000ull);  // 100 ms slices
        if (r == GL_ALREADY_SIGNALED || r == GL_CONDITION_SATISFIED) break;
        if (r == GL_WAIT_FAILED) {
            glDeleteSync(sync);
            gl_->check_reset(what, false);  // a lost context fails its waits
            fail(TGL_ERROR_BACKEND_FAILURE, "%s: glClientWaitSync failed", what);
        }
        // GL_TIMEOUT_EXPIRED: the GPU is still busy.
        long long ms = (long long)std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - start).count();
        if (limit && ms > (long long)limit) {
            glDeleteSync(sync);
            std::string m = format("%s: the GPU has not finished the queued work after %lld ms, past the time limit of "
                                   "%u ms (TGL_GLES_TIMEOUT_MS)", what, ms, limit);
            gl_->mark_lost(m);
            fail(TGL_ERROR_DEVICE_UNAVAILABLE, "device lost: %s", m.c_str());
        }
    }
    glDeleteSync(sync);
    gl_->check_reset(what, hooks_ && hooks_->lose.exchange(false));
}

void GlesDevice::next_check_seqs(std::vector<uint32_t>& out, size_t n) {
    std::lock_guard<std::mutex> lock(status_mutex_);
    for (size_t i = 0; i < n; ++i) {
        if (++check_seq_ == 0) check_seq_ = 1;  // 0 means "none"
        out.push_back(check_seq_);
    }
}

namespace {
// device_status.glsl's words when no error is recorded.
const uint32_t kStatusClear[9] = {0, 0, 0xffffffffu, 0, 0, 0, 0, 0, 0};
}  // namespace

GlesDevice::DeviceCheck GlesDevice::device_check() {
    std::lock_guard<std::mutex> lock(status_mutex_);
    if (!status_) {
        BufferRef b = alloc_buffer(sizeof kStatusClear, false);
        upload(b, 0, kStatusClear, sizeof kStatusClear);
        status_ = b;
    }
    if (++check_seq_ == 0) check_seq_ = 1;  // 0 means "none"
    Binding b;
    b.keep = status_;
    b.name = gl_buffer(status_).name();
    b.size = sizeof kStatusClear;
    return DeviceCheck{b, check_seq_};
}

void GlesDevice::read_device_status(std::thread::id waiter) {
    BufferRef status;
    {
        std::lock_guard<std::mutex> lock(status_mutex_);
        status = status_;
    }
    if (!status) return;  // no op has had a device check
    uint32_t w[9];
    glBindBuffer(GL_COPY_READ_BUFFER, gl_buffer(status).name());
    const void* p = glMapBufferRange(GL_COPY_READ_BUFFER, 0, sizeof w, GL_MAP_READ_BIT);
    if (!p) {
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
        fail(TGL_ERROR_BACKEND_FAILURE, "reading the device status: glMapBufferRange failed (GL error 0x%04x)",
             unsigned(glGetError()));
    }
    std::memcpy(w, p, sizeof w);
    glUnmapBuffer(GL_COPY_READ_BUFFER);
    glBindBuffer(GL_COPY_READ_BUFFER, 0);
    if (w[1] == 0) {
        errors_->status_read(nullptr, waiter);
        return;
    }
    glBindBuffer(GL_COPY_WRITE_BUFFER, gl_buffer(status).name());
    glBufferSubData(GL_COPY_WRITE_BUFFER, 0, sizeof kStatusClear, kStatusClear);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    const tgl_status code = tgl_status(w[4]);
    const OpInfo* info = find_op(tgl_op(w[5]));
    const Error error =
        code == TGL_ERROR_INDEX_OUT_OF_RANGE && info
            ? Error(code, format("%s (found on the GPU while running an op queued earlier)",
                                 index_out_of_range_message(*info, int64_t(w[2]), int64_t(uint64_t(w[8]) << 32 | w[3]), int64_t(w[6]),
                                                            int(w[7]))
                                     .c_str()))
            : Error(code != TGL_OK ? code : TGL_ERROR_INTERNAL,
                    format("op %s (id %u), queued earlier, raised %s on the GPU (position %u, value %u, details %u, %u)",
                           info ? info->name : "?", w[5], tgl_status_name(code), w[2], w[3], w[6], w[7]));
    errors_->status_read(&error, waiter);
}

}  // namespace gles
}  // namespace tgl
