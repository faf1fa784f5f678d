// Plugins (through libtensorgl), devices and buffers.
#include "tgl_test/support.h"

namespace tgl_test {

namespace {

std::string status_text(tgl_status s) {
    return std::string(tgl_status_name(s)) + " (" + std::to_string(s) + ")";
}

}  // namespace

Plugin::Plugin(const std::string& name_or_path) {
    tgl_status s = tgl_plugin_load(name_or_path.c_str(), &plugin_);
    if (s != TGL_OK || !plugin_)
        throw Failure("tgl_plugin_load(\"" + name_or_path + "\") failed: " + status_text(s) + ": " +
                      tgl_loader_last_error());
    api_ = tgl_plugin_get_api(plugin_);
    if (!api_) throw Failure("tgl_plugin_get_api returned NULL for " + name_or_path);
    const char* n = tgl_plugin_name(plugin_);
    const char* p = tgl_plugin_path(plugin_);
    name_ = n ? n : "?";
    path_ = p ? p : name_or_path;
    loader_api_ = api_;
    api_ = counted_api(name_, api_, &counted_);
}

Plugin::~Plugin() { tgl_plugin_release(plugin_); }

std::string Plugin::last_error() const {
    const char* m = api_->last_error_message();
    return m ? std::string(m) : std::string("(last_error_message returned NULL)");
}

Device::Device(Plugin& plugin, uint32_t index) : plugin_(plugin) {
    uint32_t count = 0;
    check(plugin_.api().device_count(&count), "device_count");
    if (index >= count)
        throw Failure("plugin '" + plugin_.name() + "' has " + std::to_string(count) +
                      " device(s); device " + std::to_string(index) + " is needed");
    check(plugin_.api().device_open(index, &device_), "device_open(" + std::to_string(index) + ")");
}

Device::~Device() {
    if (device_) plugin_.api().device_close(device_);
}

void Device::close() {
    if (!device_) return;
    tgl_device d = device_;
    device_ = 0;
    check(plugin_.api().device_close(d), "device_close");
}

void Device::check(tgl_status s, const std::string& what) const {
    if (s != TGL_OK)
        throw Failure("plugin '" + plugin_.name() + "': " + what + " failed: " + status_text(s) + ": " +
                      plugin_.last_error());
}

tgl_buffer Device::alloc(uint64_t bytes) {
    tgl_buffer b = 0;
    check(api().buffer_alloc(device_, bytes, &b), "buffer_alloc(" + std::to_string(bytes) + " bytes)");
    return b;
}

void Device::free(tgl_buffer buffer) { check(api().buffer_free(device_, buffer), "buffer_free"); }

void Device::upload(tgl_buffer buffer, uint64_t offset, const void* src, uint64_t bytes) {
    check(api().buffer_upload(device_, buffer, offset, src, bytes),
          "buffer_upload(offset " + std::to_string(offset) + ", " + std::to_string(bytes) + " bytes)");
}

void Device::download(tgl_buffer buffer, uint64_t offset, void* dst, uint64_t bytes) {
    check(api().buffer_download(device_, buffer, offset, dst, bytes),
          "buffer_download(offset " + std::to_string(offset) + ", " + std::to_string(bytes) + " bytes)");
}

void Device::fill(tgl_buffer buffer, uint64_t offset, uint64_t bytes, const void* pattern, uint32_t size) {
    check(api().buffer_fill(device_, buffer, offset, bytes, pattern, size),
          "buffer_fill(offset " + std::to_string(offset) + ", " + std::to_string(bytes) + " bytes, pattern of " +
              std::to_string(size) + ")");
}

void Device::synchronize() { check(api().synchronize(device_), "synchronize"); }

tgl_status Device::run(tgl_op op, const void* params, const std::vector<tgl_tensor>& inputs,
                       const std::vector<tgl_tensor>& outputs) {
    return api().run_op(device_, op, params, inputs.empty() ? nullptr : inputs.data(), uint32_t(inputs.size()),
                        outputs.empty() ? nullptr : outputs.data(), uint32_t(outputs.size()));
}

void Device::run_ok(tgl_op op, const void* params, const std::vector<tgl_tensor>& inputs,
                    const std::vector<tgl_tensor>& outputs) {
    check(run(op, params, inputs, outputs), "run_op(op " + std::to_string(op) + ")");
}

Buffer::~Buffer() {
    if (handle_) device_->api().buffer_free(device_->handle(), handle_);
}

}  // namespace tgl_test
