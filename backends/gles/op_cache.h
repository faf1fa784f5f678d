// The plans of recently queued ops (GlesDevice::run): an op queued again with the same arguments
// (the op, its params bytes, every operand's dtype, shape, strides, offset and buffer) reuses the
// dispatches recorded for it the first time, as a graph replay does, instead of planning them
// again: choosing kernels, looking programs up, building windows and uniforms cost the caller's
// thread several microseconds per op, far more than the GL calls that issue it.
//
// What an entry may hold: programs (kept by the device anyway), the device's status buffer and
// its current scratch buffer. Operand buffers are not held (a freed buffer's entry is simply never
// hit again: buffers are named by a serial number that is never reused); ops whose planning
// allocated other device memory are not cached. The scratch buffer changes (it grows, or a large
// one is released at synchronize): entries recorded with another scratch are dropped then
// (scratch generation), so that the cache never keeps device memory alive.
#pragma once

#include "backend.h"

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tgl {
namespace gles {

class OpCache {
public:
    // Entries kept, least recently used dropped first (TGL_TUNE_SUBMIT's cache<N>).
    static constexpr size_t kDefaultCapacity = 1024;

    using Key = std::vector<uint64_t>;
    // The key of a validated call into `key` (cleared first).
    static void make_key(const OpCall& call, Key& key);
    static uint64_t hash(const Key& key);

    explicit OpCache(size_t capacity) : capacity_(capacity) {}
    // The entry for `key`, or null. `generation`: the device's scratch generation now.
    std::shared_ptr<Device::RecordedOp> find(const Key& key, uint64_t hash, uint64_t generation);
    // Adds an entry recorded while the scratch generation was `generation` (dropped if it has
    // changed since: the entry may hold the old scratch).
    void insert(const Key& key, uint64_t hash, uint64_t generation, std::shared_ptr<Device::RecordedOp> op);
    // Drops every entry recorded before scratch generation `generation`.
    void drop_before(uint64_t generation);
    size_t size();

private:
    struct Entry {
        Key key;
        uint64_t hash;
        std::shared_ptr<Device::RecordedOp> op;
    };
    void sync(uint64_t generation);  // (mutex_ held)
    const size_t capacity_;
    std::mutex mutex_;
    uint64_t generation_ = 0;
    std::list<Entry> lru_;  // most recently used first
    std::unordered_multimap<uint64_t, std::list<Entry>::iterator> index_;
};

}  // namespace gles
}  // namespace tgl
