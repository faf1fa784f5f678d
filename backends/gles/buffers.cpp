// Buffers and transfers of the GLES device: allocation, upload (through the staging pool),
// download, copy, the scratch buffer and the SSBO windows that bind views of buffers.
#include "gles_device.h"

#include "block_dtypes.h"  // backends/common

#include "status.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace tgl {
namespace gles {

namespace {

// Size of the GL buffer store behind a buffer of `bytes`: a multiple of 4 (the shaders address
// 32-bit words) and never 0 (so that any buffer can be bound).
int64_t store_bytes(uint64_t bytes) { return int64_t(std::max<uint64_t>(4, (bytes + 3) & ~uint64_t(3))); }

}  // namespace

std::shared_ptr<StagingPool::Block> StagingPool::get(size_t bytes) {
    std::unique_ptr<Block> block;
    {
        // Best fit among idle blocks that are not more than twice too large.
        std::lock_guard<std::mutex> lock(mutex_);
        size_t best = idle_.size();
        for (size_t i = 0; i < idle_.size(); ++i)
            if (idle_[i]->capacity >= bytes && idle_[i]->capacity / 2 <= bytes &&
                (best == idle_.size() || idle_[i]->capacity < idle_[best]->capacity))
                best = i;
        if (best < idle_.size()) {
            block = std::move(idle_[best]);
            idle_.erase(idle_.begin() + long(best));
            idle_bytes_ -= block->capacity;
        }
    }
    if (!block) {
        block.reset(new Block);
        block->capacity = std::max<size_t>(bytes, 1);
        block->data.reset(new uint8_t[block->capacity]);  // uninitialised: it is overwritten at once
    }
    block->size = bytes;
    std::weak_ptr<StagingPool> pool = shared_from_this();
    return std::shared_ptr<Block>(block.release(), [pool](Block* b) {
        if (auto p = pool.lock()) p->put(b);
        else delete b;
    });
}

void StagingPool::put(Block* b) {
    std::unique_ptr<Block> block(b);
    std::lock_guard<std::mutex> lock(mutex_);
    if (block->capacity > kMaxIdleBytes) return;
    // Keep the most recent blocks: drop the oldest until the new one fits.
    while (!idle_.empty() && idle_bytes_ + block->capacity > kMaxIdleBytes) {
        idle_bytes_ -= idle_.front()->capacity;
        idle_.erase(idle_.begin());
    }
    idle_bytes_ += block->capacity;
    idle_.push_back(std::move(block));
}

int64_t GlesDevice::max_window_bytes() const {
    int64_t cap = int64_t(INT32_MAX) + 1 - window_alignment();
    if (hooks_ && hooks_->max_window) cap = std::min<int64_t>(cap, std::max<int64_t>(int64_t(hooks_->max_window), 4 * window_alignment()));
    return std::min<int64_t>(limits().max_ssbo_block_bytes, cap) & ~int64_t(3);
}

int64_t GlesDevice::window_alignment() const {
    return std::lcm<int64_t>(limits().ssbo_offset_alignment, 16);
}

int64_t GlesDevice::window_bytes(const TensorArg& t) const {
    if (t.byte_hi <= t.byte_lo) return 0;
    const int64_t start = t.byte_lo - t.byte_lo % window_alignment();
    return (t.byte_hi - start + 3) & ~int64_t(3);  // whole words (the store is padded to them)
}

Binding GlesDevice::window(const TensorArg& t, const char* what, int32_t* elem_offset) const {
    int64_t align = window_alignment();
    int64_t start = t.byte_lo - t.byte_lo % align;
    int64_t size = window_bytes(t);
    if (t.byte_hi <= t.byte_lo)
        fail(TGL_ERROR_INTERNAL, "%s: window of an empty view", what);
    if (size > max_window_bytes())
        fail(TGL_ERROR_RESOURCE_EXHAUSTED,
             "%s: the view spans bytes [%lld, %lld) of its buffer (%lld bytes), but one shader storage block on "
             "this device covers at most %lld bytes (GL_MAX_SHADER_STORAGE_BLOCK_SIZE = %lld)",
             what, (long long)t.byte_lo, (long long)t.byte_hi, (long long)(t.byte_hi - t.byte_lo),
             (long long)max_window_bytes(), (long long)limits().max_ssbo_block_bytes);
    const int64_t es = tgl_dtype_size(t.dtype);
    // A block dtype: the byte of its first row's block (block_dtypes.h); else an element index.
    int64_t rel = is_block_dtype(t.dtype) ? block_byte(t.dtype, t.offset) - start
                                          : (t.offset * es - start) / es;  // exact: start is 16-byte aligned; fits in 32 bits
    if (rel < 0 || rel > INT32_MAX)
        fail(TGL_ERROR_INTERNAL, "%s: element offset %lld outside its window", what, (long long)rel);
    *elem_offset = int32_t(rel);
    Binding b;
    b.keep = t.buffer;
    b.name = gl_buffer(t.buffer).name();
    b.offset = start;
    b.size = size;
    return b;
}

BufferRef GlesDevice::scratch(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(scratch_mutex_);
    if (!scratch_ || scratch_->size() < bytes) {
        scratch_.reset();  // the old one goes once the work queued with it is done
        scratch_ = alloc_buffer(std::max<uint64_t>(bytes, 1u << 16), false);
        const uint64_t gen = ++scratch_gen_;
        if (op_cache_) op_cache_->drop_before(gen);  // (entries with the old one)
    }
    return scratch_;
}

BufferRef GlesDevice::alloc(uint64_t bytes) { return alloc_buffer(bytes, true); }

BufferRef GlesDevice::alloc_buffer(uint64_t bytes, bool user) {
    const Limits& L = limits();
    if (bytes > L.max_buffer_bytes || bytes > uint64_t(INT64_MAX) - 4)
        fail(TGL_ERROR_RESOURCE_EXHAUSTED, "bytes = %llu, but this device allocates at most %llu bytes per buffer (%s)",
             (unsigned long long)bytes, (unsigned long long)L.max_buffer_bytes, L.max_buffer_reason);
    GLuint name = 0;
    static const GLenum kUsage[] = {GL_STATIC_DRAW, GL_STATIC_COPY, GL_DYNAMIC_DRAW, GL_DYNAMIC_COPY, GL_STREAM_COPY};
    const GLenum usage = kUsage[int(tuning_.buffer_usage)];  // TGL_TUNE_BUFFER (tuning.h)
    gl_->call("buffer_alloc", [&] {
        glGenBuffers(1, &name);
        glBindBuffer(GL_COPY_WRITE_BUFFER, name);
        glBufferData(GL_COPY_WRITE_BUFFER, GLsizeiptr(store_bytes(bytes)), nullptr, usage);
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
        GLenum e = glGetError();
        // TGL_GLES_TEST_FAULT=max_bytes=N: refused as the driver would refuse it.
        bool simulated = e == GL_NO_ERROR && hooks_ && hooks_->refuse_alloc(uint64_t(store_bytes(bytes)));
        if (simulated) e = GL_OUT_OF_MEMORY;
        if (e != GL_NO_ERROR) {
            glDeleteBuffers(1, &name);
            name = 0;
            while (glGetError() != GL_NO_ERROR) {
            }
            if (e == GL_OUT_OF_MEMORY)
                fail(TGL_ERROR_RESOURCE_EXHAUSTED, "the driver is out of memory for a %llu-byte buffer (GL_OUT_OF_MEMORY%s)",
                     (unsigned long long)bytes,
                     simulated ? format(", simulated: TGL_GLES_TEST_FAULT=%s with %llu bytes live", hooks_->spec.c_str(),
                                        (unsigned long long)hooks_->live_bytes.load()).c_str()
                               : "");
            fail(TGL_ERROR_BACKEND_FAILURE, "glBufferData of %llu bytes failed with GL error 0x%04x",
                 (unsigned long long)bytes, unsigned(e));
        }
    });
    if (!user) internal_allocs_.fetch_add(1, std::memory_order_relaxed);
    return std::make_shared<GlesBuffer>(bytes, name, gl_, hooks_, uint64_t(store_bytes(bytes)), stats_, user);
}

void GlesDevice::upload(const BufferRef& dst, uint64_t offset, const void* src, uint64_t bytes) {
    // The host bytes are copied before returning; the GL thread writes them later, in order.
    std::shared_ptr<StagingPool::Block> data = staging_->get(size_t(bytes));
    std::memcpy(data->data.get(), src, size_t(bytes));
    gl_->post("buffer_upload", [dst, offset, data] {
        glBindBuffer(GL_COPY_WRITE_BUFFER, gl_buffer(dst).name());
        glBufferSubData(GL_COPY_WRITE_BUFFER, GLintptr(offset), GLsizeiptr(data->size), data->data.get());
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    });
}

void GlesDevice::download(const BufferRef& src, uint64_t offset, void* dst, uint64_t bytes) {
    const std::thread::id waiter = std::this_thread::get_id();
    gl_->call("buffer_download", [&] {
        wait_idle("buffer_download");
        glBindBuffer(GL_COPY_READ_BUFFER, gl_buffer(src).name());
        void* p = glMapBufferRange(GL_COPY_READ_BUFFER, GLintptr(offset), GLsizeiptr(bytes), GL_MAP_READ_BIT);
        if (!p) {
            GLenum e = glGetError();
            glBindBuffer(GL_COPY_READ_BUFFER, 0);
            fail(e == GL_OUT_OF_MEMORY ? TGL_ERROR_RESOURCE_EXHAUSTED : TGL_ERROR_BACKEND_FAILURE,
                 "glMapBufferRange of %llu bytes at offset %llu failed (GL error 0x%04x)", (unsigned long long)bytes,
                 (unsigned long long)offset, unsigned(e));
        }
        std::memcpy(dst, p, bytes);
        GLboolean intact = glUnmapBuffer(GL_COPY_READ_BUFFER);
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
        if (!intact) fail(TGL_ERROR_BACKEND_FAILURE, "the buffer's contents were lost while mapped (glUnmapBuffer)");
        read_device_status(waiter);
    });
    raise_device_error();
    gl_->raise_pending();
}

void GlesDevice::copy(const BufferRef& src, uint64_t src_offset, const BufferRef& dst, uint64_t dst_offset,
                      uint64_t bytes) {
    // 16-byte aligned ranges by a shader (glCopyBufferSubData is an order of magnitude slower on
    // NVIDIA's driver); unaligned ranges and a tail under 16 bytes by glCopyBufferSubData, as is
    // everything under TGL_TUNE_STREAM's glcopy (to compare).
    const bool aligned = src_offset % 16 == 0 && dst_offset % 16 == 0;
    const uint64_t by_shader = aligned && !stream_.gl_copy ? bytes & ~uint64_t(15) : 0;
    if (by_shader) run_buffer_copy(*this, src, src_offset, dst, dst_offset, by_shader);
    if (by_shader == bytes) return;
    src_offset += by_shader;
    dst_offset += by_shader;
    bytes -= by_shader;
    gl_->post("buffer_copy", [src, src_offset, dst, dst_offset, bytes] {
        glBindBuffer(GL_COPY_READ_BUFFER, gl_buffer(src).name());
        glBindBuffer(GL_COPY_WRITE_BUFFER, gl_buffer(dst).name());
        glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, GLintptr(src_offset), GLintptr(dst_offset),
                            GLsizeiptr(bytes));
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    });
}

}  // namespace gles
}  // namespace tgl
