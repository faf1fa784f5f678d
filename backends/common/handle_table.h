// Checked handles: a handle is (tag:8 | generation:24 | slot+1:32). A freed slot bumps its
// generation, so a freed handle is recognised as stale (use after free, double free) and a made-up
// or foreign one as invalid. Never a raw pointer taken on trust. A slot whose generation reached
// the last one (2^24 - 1) is retired when freed, never reused: a wrapped generation would make a
// stale handle valid again (it then reads and frees the new owner's object). A retired slot costs
// its 24 bytes: 16.7 million alloc/free pairs per 24 bytes.
#pragma once

#include "status.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

namespace tgl {

template <class T>
class HandleTable {
public:
    // `kind` names the handle in messages ("buffer", "device"); `tag` makes handles of different
    // tables and plugins distinguishable; `released` is how a removed handle is described
    // ("freed" for buffers, "closed" for devices, "destroyed" for graphs).
    // `first_generation` (1 unless a test starts slots near the last generation) is the
    // generation of a new slot.
    HandleTable(const char* kind, uint8_t tag, const char* released = "freed", uint32_t first_generation = 1)
        : kind_(kind), tag_(tag), released_(released),
          first_generation_(first_generation >= 1 && first_generation <= kLastGeneration ? first_generation : 1) {}

    uint64_t insert(std::shared_ptr<T> object) {
        std::lock_guard<std::mutex> lock(mutex_);
        uint32_t slot;
        if (!free_slots_.empty()) {
            slot = free_slots_.back();
            free_slots_.pop_back();
        } else {
            if (slots_.size() >= 0xFFFFFFFEu) fail(TGL_ERROR_RESOURCE_EXHAUSTED, "too many %ss", kind_);
            slot = static_cast<uint32_t>(slots_.size());
            slots_.push_back(Slot{nullptr, first_generation_});
        }
        slots_[slot].object = std::move(object);
        return make_handle(slot, slots_[slot].generation);
    }

    // The object, or throws INVALID_HANDLE / STALE_HANDLE naming `what` (e.g. "inputs[0].buffer").
    // `freeing` words a stale handle as a double free.
    std::shared_ptr<T> get(uint64_t handle, const char* what, bool freeing = false) const {
        std::lock_guard<std::mutex> lock(mutex_);
        return slots_[check(handle, what, freeing)].object;
    }

    // Removes and returns the object; a second removal reports a double free.
    std::shared_ptr<T> remove(uint64_t handle, const char* what) {
        std::lock_guard<std::mutex> lock(mutex_);
        uint32_t slot = check(handle, what, true);
        std::shared_ptr<T> object = std::move(slots_[slot].object);
        release(slot);
        return object;
    }

    // Removes every object for which pred(object) holds; returns them.
    template <class Pred>
    std::vector<std::shared_ptr<T>> remove_if(Pred pred) {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<std::shared_ptr<T>> removed;
        size_t n = 0;
        for (const Slot& s : slots_) n += s.object && pred(*s.object);
        removed.reserve(n);  // (out of memory: throws before anything is removed)
        for (uint32_t slot = 0; slot < slots_.size(); ++slot) {
            if (slots_[slot].object && pred(*slots_[slot].object)) {
                removed.push_back(std::move(slots_[slot].object));
                release(slot);
            }
        }
        return removed;
    }

private:
    static constexpr uint32_t kLastGeneration = 0xFFFFFFu;

    struct Slot {
        std::shared_ptr<T> object;
        uint32_t generation;
    };

    // The slot's object is gone: its handles become stale, and the slot is reused under the next
    // generation, or retired (left empty at the last generation: its handles stay stale).
    // Never throws: with no memory to list it as free, the slot is retired instead.
    void release(uint32_t slot) noexcept {
        if (slots_[slot].generation == kLastGeneration) return;
        ++slots_[slot].generation;
        try {
            free_slots_.push_back(slot);
        } catch (...) {
        }
    }

    uint64_t make_handle(uint32_t slot, uint32_t generation) const {
        return (uint64_t(tag_) << 56) | (uint64_t(generation) << 32) | (uint64_t(slot) + 1);
    }

    uint32_t check(uint64_t handle, const char* what, bool freeing) const {
        unsigned long long h = static_cast<unsigned long long>(handle);
        if (handle == 0) fail(TGL_ERROR_INVALID_HANDLE, "%s is the null %s handle (0)", what, kind_);
        uint32_t low = uint32_t(handle);
        uint32_t generation = uint32_t(handle >> 32) & 0xFFFFFFu;
        if (uint8_t(handle >> 56) != tag_ || low == 0 || low > slots_.size())
            fail(TGL_ERROR_INVALID_HANDLE, "%s = 0x%016llx is not a %s handle issued by this plugin",
                 what, h, kind_);
        const Slot& s = slots_[low - 1];
        if (generation == s.generation && s.object) return low - 1;
        // Generations only grow; a handle from a later generation was never issued.
        if (generation < s.generation || (generation == s.generation && !s.object)) {
            const char* verb = std::strcmp(released_, "closed") == 0      ? "close"
                               : std::strcmp(released_, "destroyed") == 0 ? "destroy"
                                                                          : "free";
            if (freeing)
                fail(TGL_ERROR_STALE_HANDLE, "%s = 0x%016llx: %s was already %s (double %s)",
                     what, h, kind_, released_, verb);
            fail(TGL_ERROR_STALE_HANDLE, "%s = 0x%016llx: %s was %s (use after %s)", what, h,
                 kind_, released_, verb);
        }
        fail(TGL_ERROR_INVALID_HANDLE, "%s = 0x%016llx is not a %s handle issued by this plugin",
             what, h, kind_);
    }

    const char* kind_;
    uint8_t tag_;
    const char* released_;
    const uint32_t first_generation_;
    mutable std::mutex mutex_;
    std::vector<Slot> slots_;
    std::vector<uint32_t> free_slots_;
};

}  // namespace tgl
