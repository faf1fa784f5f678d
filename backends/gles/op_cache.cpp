#include "op_cache.h"

#include "gles_device.h"

#include <algorithm>
#include <cstring>

namespace tgl {
namespace gles {

void OpCache::make_key(const OpCall& call, Key& key) {
    key.clear();
    // The params struct's bytes as validated (struct_size of them, at most the struct's), in words.
    uint32_t params_bytes = 0;
    if (call.params) {
        std::memcpy(&params_bytes, call.params, sizeof params_bytes);
        params_bytes = std::min(params_bytes, call.info->params_size);
    }
    key.push_back(uint64_t(call.info->op) | uint64_t(call.params != nullptr) << 32);
    key.push_back(uint64_t(call.inputs.size()) | uint64_t(call.outputs.size()) << 16 | uint64_t(params_bytes) << 32);
    const size_t at = key.size();
    key.resize(at + (params_bytes + 7) / 8, 0);
    if (params_bytes) std::memcpy(key.data() + at, call.params, params_bytes);
    auto operand = [&](const TensorArg& t) {
        if (!t.present()) {
            key.push_back(0);
            return;
        }
        key.push_back(1 | uint64_t(t.dtype) << 8 | uint64_t(t.rank) << 16);
        key.push_back(gl_buffer(t.buffer).serial());
        key.push_back(uint64_t(t.offset));
        for (int d = 0; d < t.rank; ++d) {
            key.push_back(uint64_t(t.shape[d]));
            key.push_back(uint64_t(t.strides[d]));
        }
    };
    for (const TensorArg& t : call.inputs) operand(t);
    for (const TensorArg& t : call.outputs) operand(t);
}

uint64_t OpCache::hash(const Key& key) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ key.size();
    for (uint64_t w : key) {
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 33;
    }
    return h;
}

void OpCache::sync(uint64_t generation) {
    if (generation <= generation_) return;  // (generations only grow)
    lru_.clear();
    index_.clear();
    generation_ = generation;
}

std::shared_ptr<Device::RecordedOp> OpCache::find(const Key& key, uint64_t hash, uint64_t generation) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (generation < generation_) return nullptr;  // read before the scratch changed: plan afresh
    sync(generation);
    auto range = index_.equal_range(hash);
    for (auto it = range.first; it != range.second; ++it) {
        const auto entry = it->second;
        if (entry->key != key) continue;
        lru_.splice(lru_.begin(), lru_, entry);
        return entry->op;
    }
    return nullptr;
}

void OpCache::insert(const Key& key, uint64_t hash, uint64_t generation, std::shared_ptr<Device::RecordedOp> op) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (generation != generation_) return;  // the scratch changed while the op was planned
    auto range = index_.equal_range(hash);
    for (auto it = range.first; it != range.second; ++it)
        if (it->second->key == key) return;  // another thread planned it meanwhile
    lru_.push_front(Entry{key, hash, std::move(op)});
    index_.emplace(hash, lru_.begin());
    if (lru_.size() <= capacity_) return;
    const auto last = std::prev(lru_.end());
    auto at = index_.equal_range(last->hash);
    for (auto it = at.first; it != at.second; ++it)
        if (it->second == last) {
            index_.erase(it);
            break;
        }
    lru_.pop_back();
}

void OpCache::drop_before(uint64_t generation) {
    std::lock_guard<std::mutex> lock(mutex_);
    sync(generation);
}

size_t OpCache::size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return lru_.size();
}

}  // namespace gles
}  // namespace tgl
