// libtensorgl: finds plugins, checks them, dlopens them and hands out verified function tables.
// The contract is documented in tensorgl/loader.h; the order of the checks follows
// shared/research/abi.md section 7 ("Checks before trusting a plugin").
#include <tensorgl/loader.h>

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#define TGL_LOADER_EXPORT extern "C" __attribute__((visibility("default")))

#ifndef TGL_PLUGIN_INSTALL_DIR_FULL
#error "TGL_PLUGIN_INSTALL_DIR_FULL must be defined by the build (<libdir>/tensorgl)"
#endif

// One loaded plugin. Records are never freed: the library stays mapped for the life of the
// process (a plugin may own threads), so a tgl_plugin pointer stays valid even after release.
struct tgl_plugin {
    std::string path;     // absolute, symlinks resolved
    std::string name;     // from get_plugin_info
    std::string version;  // from get_plugin_info (may be empty)
    dev_t dev = 0;
    ino_t ino = 0;
    void* handle = nullptr;
    const tgl_plugin_api* api = nullptr;  // = &table
    // The host's view of the plugin's table: the plugin's members up to the negotiated minor,
    // NULL beyond (a 1.0 plugin's table ends before the 1.1 members; never read past it).
    tgl_plugin_api table{};
    uint32_t negotiated_minor = 0;
    long refs = 0;  // host references; guarded by the registry mutex
};

namespace {

// ------------------------------------------------------------------------------------------
// Per-thread error message and the debug log.

thread_local std::string t_last_error;

bool debug_enabled() {
    const char* v = secure_getenv("TGL_LOADER_DEBUG");
    return v && *v && std::strcmp(v, "0") != 0;
}

void debug(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void debug(const char* fmt, ...) {
    if (!debug_enabled()) return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "tensorgl loader: %s\n", buf);
}

std::string vformat(const char* fmt, va_list ap) {
    va_list copy;
    va_copy(copy, ap);
    int n = std::vsnprintf(nullptr, 0, fmt, copy);
    va_end(copy);
    if (n < 0) return fmt;
    std::string s(static_cast<size_t>(n) + 1, '\0');
    std::vsnprintf(&s[0], s.size(), fmt, ap);
    s.resize(static_cast<size_t>(n));
    return s;
}

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string s = vformat(fmt, ap);
    va_end(ap);
    return s;
}

// Records the message for this thread (and the debug log) and returns `status`.
tgl_status fail(tgl_status status, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
tgl_status fail(tgl_status status, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    t_last_error = vformat(fmt, ap);
    va_end(ap);
    debug("  error %s: %s", tgl_status_name(status), t_last_error.c_str());
    return status;
}

// ------------------------------------------------------------------------------------------
// The registry of loaded plugins. Intentionally leaked (never destroyed at exit), like the
// libraries themselves.

std::mutex& registry_mutex() {
    static std::mutex* m = new std::mutex;
    return *m;
}

std::vector<tgl_plugin*>& registry() {
    static std::vector<tgl_plugin*>* r = new std::vector<tgl_plugin*>;
    return *r;
}

// ------------------------------------------------------------------------------------------
// Paths.

std::string dirname_of(const std::string& path) {
    size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

bool realpath_of(const std::string& path, std::string* out) {
    char* r = ::realpath(path.c_str(), nullptr);
    if (!r) return false;
    *out = r;
    std::free(r);
    return true;
}

// A plugin short name: [A-Za-z0-9_.-]+, not starting with '.', (so it maps to one file name).
bool valid_name(const std::string& name) {
    if (name.empty() || name[0] == '.') return false;
    for (char c : name) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == '.';
        if (!ok) return false;
    }
    return true;
}

const char kPrefix[] = "libtensorgl-";
const char kSuffix[] = ".so";

std::string file_name_for(const std::string& name) { return kPrefix + name + kSuffix; }

// The directory holding libtensorgl itself (empty if it cannot be found).
std::string loader_dir() {
    Dl_info info;
    std::memset(&info, 0, sizeof info);
    if (!dladdr(reinterpret_cast<void*>(&loader_dir), &info) || !info.dli_fname) return {};
    std::string self;
    if (!realpath_of(info.dli_fname, &self)) return {};
    return dirname_of(self);
}

struct SearchPath {
    std::vector<std::string> dirs;
    std::string origin;  // "TGL_PLUGIN_PATH" or "defaults"
};

// TGL_PLUGIN_PATH (replaces the defaults when set and non-empty), else: the directory of
// libtensorgl, its tensorgl/ subdirectory (an installed tree moved to another prefix), then the
// install directory. Empty elements are ignored; relative elements are
// skipped (the CWD is never searched). Duplicates are dropped.
SearchPath search_path() {
    SearchPath sp;
    std::vector<std::string> raw;
    const char* env = secure_getenv("TGL_PLUGIN_PATH");
    if (env && *env) {
        sp.origin = "TGL_PLUGIN_PATH";
        std::string s = env;
        size_t start = 0;
        while (start <= s.size()) {
            size_t colon = s.find(':', start);
            if (colon == std::string::npos) colon = s.size();
            std::string elem = s.substr(start, colon - start);
            start = colon + 1;
            if (elem.empty()) continue;
            if (elem[0] != '/') {
                debug("search dir '%s' (TGL_PLUGIN_PATH): skipped, relative directories are "
                      "never searched",
                      elem.c_str());
                continue;
            }
            raw.push_back(elem);
        }
    } else {
        sp.origin = "defaults";
        std::string own = loader_dir();
        if (!own.empty()) {
            raw.push_back(own);
            raw.push_back(own + "/tensorgl");
        } else debug("cannot find the directory of libtensorgl itself (dladdr failed); skipped");
        raw.push_back(TGL_PLUGIN_INSTALL_DIR_FULL);
    }
    for (std::string& d : raw) {
        while (d.size() > 1 && d.back() == '/') d.pop_back();
        if (std::find(sp.dirs.begin(), sp.dirs.end(), d) == sp.dirs.end()) sp.dirs.push_back(d);
    }
    return sp;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += sep;
        out += v[i];
    }
    return out;
}

// ------------------------------------------------------------------------------------------
// Checks before dlopen.

// A directory that anybody may write into (and that is not sticky) lets anybody replace the
// plugin. Returns TGL_OK or fails with TGL_ERROR_PLUGIN_INSECURE.
// `file` is how the plugin is named in the message.
tgl_status check_dir(const std::string& file, const std::string& dir) {
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0) return TGL_OK;  // the file's own stat succeeded
    if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
        return fail(TGL_ERROR_PLUGIN_INSECURE,
                    "%s: refusing to load: its directory %s is world-writable (mode %04o) and not "
                    "sticky, so anybody could replace the plugin",
                    file.c_str(), dir.c_str(), static_cast<unsigned>(st.st_mode & 07777));
    return TGL_OK;
}

// Every directory above `dir` (a resolved path) up to the root: whoever may write one of them
// (without the sticky bit) can rename the directory below it and put another plugin in its place.
tgl_status check_ancestors(const std::string& file, const std::string& dir) {
    std::string d = dir;
    while (d != "/" && !d.empty()) {
        d = dirname_of(d);
        struct stat st;
        if (::stat(d.c_str(), &st) != 0) continue;
        if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
            return fail(TGL_ERROR_PLUGIN_INSECURE,
                        "%s: refusing to load: its parent directory %s is world-writable (mode %04o) "
                        "and not sticky, so anybody could rename the directories below it and "
                        "replace the plugin",
                        file.c_str(), d.c_str(), static_cast<unsigned>(st.st_mode & 07777));
    }
    return TGL_OK;
}

#if defined(__x86_64__)
#define TGL_NATIVE_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define TGL_NATIVE_MACHINE EM_AARCH64
#elif defined(__i386__)
#define TGL_NATIVE_MACHINE EM_386
#elif defined(__arm__)
#define TGL_NATIVE_MACHINE EM_ARM
#elif defined(__riscv)
#define TGL_NATIVE_MACHINE EM_RISCV
#elif defined(__powerpc64__)
#define TGL_NATIVE_MACHINE EM_PPC64
#endif

const char* machine_name(unsigned m) {
    switch (m) {
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "AArch64";
    case EM_386: return "i386";
    case EM_ARM: return "ARM";
    case EM_RISCV: return "RISC-V";
    case EM_PPC64: return "PowerPC64";
    default: return "other";
    }
}

const char* elf_type_name(unsigned t) {
    switch (t) {
    case ET_REL: return "relocatable object (.o)";
    case ET_EXEC: return "executable";
    case ET_DYN: return "shared object";
    case ET_CORE: return "core dump";
    default: return "unknown type";
    }
}

std::string describe_bytes(const unsigned char* b, size_t n) {
    std::string hex, text;
    for (size_t i = 0; i < n; ++i) {
        hex += format("%s%02x", i ? " " : "", b[i]);
        text += (b[i] >= 0x20 && b[i] < 0x7f) ? static_cast<char>(b[i]) : '.';
    }
    if (n == 0) return "it is empty";
    return "it starts with " + hex + " \"" + text + "\"";
}

// Cheap metadata before dlopen: ELF magic, class, byte order, type and machine. A file that is
// not an ELF shared object for this process fails with TGL_ERROR_PLUGIN_NOT_LOADABLE here, with
// a reason a person can act on (dlopen's own message is less clear about these).
tgl_status check_elf(const std::string& file) {
    int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE, "%s: cannot be opened for reading: %s",
                    file.c_str(), std::strerror(errno));
    unsigned char hdr[sizeof(Elf64_Ehdr)];
    size_t n = 0;
    while (n < sizeof hdr) {
        ssize_t r = ::read(fd, hdr + n, sizeof hdr - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += static_cast<size_t>(r);
    }
    ::close(fd);
    if (n < SELFMAG || std::memcmp(hdr, ELFMAG, SELFMAG) != 0)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                    "%s: not an ELF shared object (%s; an ELF file starts with 7f 45 4c 46)",
                    file.c_str(), describe_bytes(hdr, std::min<size_t>(n, 4)).c_str());
    const unsigned native_class = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
    if (n <= EI_DATA || hdr[EI_CLASS] != native_class)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                    "%s: wrong ELF class: the file is %s, this process is %s", file.c_str(),
                    n <= EI_CLASS                  ? "truncated"
                    : hdr[EI_CLASS] == ELFCLASS32 ? "32-bit"
                    : hdr[EI_CLASS] == ELFCLASS64 ? "64-bit"
                                                   : "of an unknown class",
                    native_class == ELFCLASS64 ? "64-bit" : "32-bit");
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const unsigned native_data = ELFDATA2LSB;
#else
    const unsigned native_data = ELFDATA2MSB;
#endif
    if (hdr[EI_DATA] != native_data)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                    "%s: wrong byte order: the file is %s-endian, this process is %s-endian",
                    file.c_str(), hdr[EI_DATA] == ELFDATA2LSB ? "little" : "big",
                    native_data == ELFDATA2LSB ? "little" : "big");
    // e_type and e_machine sit at the same offsets (16, 18) in both classes.
    if (n < 20)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE, "%s: truncated ELF header (%zu bytes)",
                    file.c_str(), n);
    uint16_t type, machine;
    std::memcpy(&type, hdr + 16, 2);
    std::memcpy(&machine, hdr + 18, 2);
    if (type != ET_DYN)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                    "%s: not a shared object: its ELF type is %s (%u)", file.c_str(),
                    elf_type_name(type), static_cast<unsigned>(type));
#ifdef TGL_NATIVE_MACHINE
    if (machine != TGL_NATIVE_MACHINE)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                    "%s: built for another CPU: ELF machine %u (%s), this process runs on %u (%s)",
                    file.c_str(), static_cast<unsigned>(machine), machine_name(machine),
                    static_cast<unsigned>(TGL_NATIVE_MACHINE), machine_name(TGL_NATIVE_MACHINE));
#else
    (void)machine;
#endif
    return TGL_OK;
}

// ------------------------------------------------------------------------------------------
// Checks of the function table.

struct RequiredMember {
    const char* name;
    size_t offset;
};

#define TGL_MEMBER(m) {#m, offsetof(tgl_plugin_api, m)}
const RequiredMember kRequiredV1_0[] = {
    TGL_MEMBER(last_error_message), TGL_MEMBER(get_plugin_info),  TGL_MEMBER(device_count),
    TGL_MEMBER(device_properties),  TGL_MEMBER(device_open),      TGL_MEMBER(device_close),
    TGL_MEMBER(buffer_alloc),       TGL_MEMBER(buffer_free),      TGL_MEMBER(buffer_size),
    TGL_MEMBER(buffer_upload),      TGL_MEMBER(buffer_download),  TGL_MEMBER(buffer_copy),
    TGL_MEMBER(buffer_fill),        TGL_MEMBER(query_op),         TGL_MEMBER(run_op),
    TGL_MEMBER(synchronize),
};
// Required in a table whose abi_minor is 1 or more.
const RequiredMember kRequiredV1_1[] = {TGL_MEMBER(timer_begin), TGL_MEMBER(timer_end)};
// Required in a table whose abi_minor is 2 or more.
const RequiredMember kRequiredV1_2[] = {TGL_MEMBER(graph_begin), TGL_MEMBER(graph_end), TGL_MEMBER(graph_replay),
                                        TGL_MEMBER(graph_destroy)};
#undef TGL_MEMBER
static_assert(sizeof(kRequiredV1_2) / sizeof(kRequiredV1_2[0]) ==
                  (TGL_PLUGIN_API_SIZE_V1_2 - TGL_PLUGIN_API_SIZE_V1_1) / sizeof(void*),
              "every v1.2 member of tgl_plugin_api must be listed as required");
// The members each minor appended, in order: required in a table of that minor or more.
struct AppendedMembers {
    uint32_t minor;
    size_t size;  // the table's size at that minor
    const RequiredMember* begin;
    const RequiredMember* end;
};
const AppendedMembers kAppended[] = {
    {1, TGL_PLUGIN_API_SIZE_V1_1, std::begin(kRequiredV1_1), std::end(kRequiredV1_1)},
    {2, TGL_PLUGIN_API_SIZE_V1_2, std::begin(kRequiredV1_2), std::end(kRequiredV1_2)},
};
static_assert(sizeof(kRequiredV1_1) / sizeof(kRequiredV1_1[0]) ==
                  (TGL_PLUGIN_API_SIZE_V1_1 - TGL_PLUGIN_API_SIZE_V1_0) / sizeof(void*),
              "every v1.1 member of tgl_plugin_api must be listed as required");
static_assert(sizeof(kRequiredV1_0) / sizeof(kRequiredV1_0[0]) ==
                  (TGL_PLUGIN_API_SIZE_V1_0 - 16) / sizeof(void*),
              "every v1.0 member of tgl_plugin_api must be listed as required");

bool member_is_null(const tgl_plugin_api* api, size_t offset) {
    void* p;
    std::memcpy(&p, reinterpret_cast<const char*>(api) + offset, sizeof p);
    return p == nullptr;
}

// The plugin's own message after a failing call, if its table lets us ask safely.
std::string plugin_message(const tgl_plugin_api* api) {
    if (!api || api->abi_major != 1 ||
        api->struct_size < offsetof(tgl_plugin_api, last_error_message) + sizeof(void*) ||
        !api->last_error_message)
        return {};
    const char* m = api->last_error_message();
    return m ? m : "";
}

// ------------------------------------------------------------------------------------------
// Loading one file.

tgl_plugin* find_loaded(dev_t dev, ino_t ino) {
    for (tgl_plugin* p : registry())
        if (p->dev == dev && p->ino == ino) return p;
    return nullptr;
}

tgl_plugin* find_loaded_name(const std::string& name) {
    for (tgl_plugin* p : registry())
        if (p->name == name) return p;
    return nullptr;
}

// Loads `given` (a path) with every check. Caller holds the registry mutex.
tgl_status load_file(const std::string& given, tgl_plugin** out) {
    struct stat st;
    if (::stat(given.c_str(), &st) != 0) {
        int err = errno;
        if (err == ENOENT || err == ENOTDIR)
            return fail(TGL_ERROR_PLUGIN_NOT_FOUND, "%s: no such file", given.c_str());
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE, "%s: cannot stat the file: %s", given.c_str(),
                    std::strerror(err));
    }
    std::string path;
    if (!realpath_of(given, &path)) path = given;
    const char* file = path.c_str();
    if (path != given) debug("  %s resolves to %s", given.c_str(), file);

    if (!S_ISREG(st.st_mode))
        return fail(TGL_ERROR_PLUGIN_INSECURE, "%s: refusing to load: not a regular file (%s)",
                    file, S_ISDIR(st.st_mode) ? "a directory" : "a device, FIFO or socket");
    if (st.st_mode & S_IWOTH)
        return fail(TGL_ERROR_PLUGIN_INSECURE,
                    "%s: refusing to load: the file is world-writable (mode %04o); remove the "
                    "write permission of others (chmod o-w)",
                    file, static_cast<unsigned>(st.st_mode & 07777));
    tgl_status s = check_dir(file, dirname_of(path));
    if (s != TGL_OK) return s;
    s = check_ancestors(file, dirname_of(path));
    if (s != TGL_OK) return s;
    struct stat lst;
    if (::lstat(given.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
        // The symlink can be replaced by whoever may write its directory.
        s = check_dir(given + " (a symlink to " + path + ")", dirname_of(given));
        if (s != TGL_OK) return s;
        std::string link_dir;
        if (realpath_of(dirname_of(given), &link_dir)) {
            s = check_ancestors(given + " (a symlink to " + path + ")", link_dir);
            if (s != TGL_OK) return s;
        }
    }

    if (tgl_plugin* p = find_loaded(st.st_dev, st.st_ino)) {
        ++p->refs;
        debug("  %s: already loaded as plugin '%s'; same handle (references: %ld)", file,
              p->name.c_str(), p->refs);
        *out = p;
        return TGL_OK;
    }

    s = check_elf(path);
    if (s != TGL_OK) return s;

    dlerror();
    void* handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = dlerror();
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE, "%s: dlopen failed: %s", file,
                    why ? why : "(no reason given)");
    }
    dlerror();
    void* sym = dlsym(handle, TGL_PLUGIN_ENTRY_NAME);
    if (!sym) {
        dlclose(handle);  // its entry point never ran: safe to unmap
        return fail(TGL_ERROR_PLUGIN_NO_ENTRY,
                    "symbol " TGL_PLUGIN_ENTRY_NAME " not found in %s (not a tensorgl ABI 1 "
                    "plugin: a plugin exports exactly this one symbol)",
                    file);
    }
    tgl_plugin_init_v1_fn init;
    std::memcpy(&init, &sym, sizeof init);

    // From here on the plugin's code has run: it is never dlclose'd, whatever happens.
    const tgl_plugin_api* api = nullptr;
    tgl_status st_init = init(TGL_ABI_MINOR, &api);
    if (st_init != TGL_OK) {
        std::string msg = plugin_message(api);
        return fail(TGL_ERROR_PLUGIN_INIT_FAILED, "%s: " TGL_PLUGIN_ENTRY_NAME " failed with %s%s%s",
                    file, tgl_status_name(st_init), msg.empty() ? "" : ": ", msg.c_str());
    }
    if (!api)
        return fail(TGL_ERROR_PLUGIN_INIT_FAILED,
                    "%s: " TGL_PLUGIN_ENTRY_NAME " returned TGL_OK but no function table", file);
    if (api->abi_major != TGL_ABI_MAJOR)
        return fail(TGL_ERROR_PLUGIN_ABI_MISMATCH, "%s: plugin ABI %u.%u, loader needs %u.x", file,
                    api->abi_major, api->abi_minor, static_cast<unsigned>(TGL_ABI_MAJOR));
    if (api->struct_size < TGL_PLUGIN_API_SIZE_V1_0)
        return fail(TGL_ERROR_PLUGIN_BAD_TABLE,
                    "%s: function table is %llu bytes, smaller than the %u bytes of ABI 1.0",
                    file, static_cast<unsigned long long>(api->struct_size),
                    static_cast<unsigned>(TGL_PLUGIN_API_SIZE_V1_0));
    for (const RequiredMember& m : kRequiredV1_0)
        if (member_is_null(api, m.offset))
            return fail(TGL_ERROR_PLUGIN_BAD_TABLE,
                        "%s: function table member %s (required since ABI 1.0) is NULL", file,
                        m.name);
    for (const AppendedMembers& m : kAppended) {
        if (api->abi_minor < m.minor) break;
        if (api->struct_size < m.size)
            return fail(TGL_ERROR_PLUGIN_BAD_TABLE,
                        "%s: function table of ABI 1.%u is %llu bytes, smaller than the %u bytes of ABI 1.%u",
                        file, api->abi_minor, static_cast<unsigned long long>(api->struct_size),
                        static_cast<unsigned>(m.size), m.minor);
        for (const RequiredMember* r = m.begin; r != m.end; ++r)
            if (member_is_null(api, r->offset))
                return fail(TGL_ERROR_PLUGIN_BAD_TABLE,
                            "%s: function table member %s (required since ABI 1.%u) is NULL", file,
                            r->name, m.minor);
    }

    tgl_plugin_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    tgl_status st_info = api->get_plugin_info(&info);
    if (st_info != TGL_OK) {
        std::string msg = plugin_message(api);
        return fail(TGL_ERROR_PLUGIN_INIT_FAILED, "%s: get_plugin_info failed with %s%s%s", file,
                    tgl_status_name(st_info), msg.empty() ? "" : ": ", msg.c_str());
    }
    if (!info.name || !valid_name(info.name))
        return fail(TGL_ERROR_PLUGIN_BAD_TABLE,
                    "%s: get_plugin_info gave %s%s%s as the plugin name; expected a short name "
                    "of letters, digits, '_', '-' or '.'",
                    file, info.name ? "'" : "no name", info.name ? info.name : "",
                    info.name ? "'" : "");
    if (tgl_plugin* other = find_loaded_name(info.name))
        return fail(TGL_ERROR_PLUGIN_DUPLICATE,
                    "%s: a plugin named '%s' is already loaded from %s; two plugins of one name "
                    "cannot be loaded at once",
                    file, info.name, other->path.c_str());

    std::unique_ptr<tgl_plugin> p(new tgl_plugin);
    p->path = path;
    p->name = info.name;
    p->version = info.version ? info.version : "";
    p->dev = st.st_dev;
    p->ino = st.st_ino;
    p->handle = handle;
    p->negotiated_minor = std::min<uint32_t>(TGL_ABI_MINOR, api->abi_minor);
    size_t table_size = TGL_PLUGIN_API_SIZE_V1_0;  // of the negotiated minor
    for (const AppendedMembers& m : kAppended)
        if (p->negotiated_minor >= m.minor) table_size = m.size;
    const size_t copied = std::min<size_t>(sizeof p->table, table_size);
    std::memcpy(&p->table, api, copied);  // the rest stays zero: absent members are NULL
    p->table.struct_size = copied;
    p->api = &p->table;
    p->refs = 1;
    debug("  loaded %s: plugin '%s' version %s, ABI %u.%u, negotiated minor %u", file,
          p->name.c_str(), p->version.empty() ? "(none)" : p->version.c_str(), api->abi_major,
          api->abi_minor, p->negotiated_minor);
    registry().push_back(p.get());
    *out = p.release();
    return TGL_OK;
}

tgl_status load_by_name(const std::string& name, tgl_plugin** out) {
    SearchPath sp = search_path();
    const std::string file = file_name_for(name);
    debug("looking for plugin '%s' (%s) in %s: %s", name.c_str(), file.c_str(),
          sp.origin.c_str(), sp.dirs.empty() ? "(no directories)" : join(sp.dirs, ":").c_str());
    for (const std::string& dir : sp.dirs) {
        std::string candidate = (dir == "/" ? "" : dir) + "/" + file;
        struct stat st;
        if (::stat(candidate.c_str(), &st) != 0) {
            debug("candidate %s: skipped: %s", candidate.c_str(), std::strerror(errno));
            continue;
        }
        // The first file that exists is the plugin: a broken one is reported, never silently
        // replaced by another copy further down the path.
        debug("candidate %s: taken (first match on the search path)", candidate.c_str());
        return load_file(candidate, out);
    }
    return fail(TGL_ERROR_PLUGIN_NOT_FOUND,
                "plugin '%s' not found: no %s in %s (search path from %s; the current directory "
                "is never searched)",
                name.c_str(), file.c_str(),
                sp.dirs.empty() ? "any directory" : join(sp.dirs, ", ").c_str(),
                sp.origin == "defaults" ? "the defaults: libtensorgl's directory, its tensorgl/ "
                                          "subdirectory, then the install directory"
                                        : "TGL_PLUGIN_PATH");
}

// Per-thread storage for tgl_plugin_list's strings.
thread_local std::vector<std::string> t_list_names, t_list_paths;

}  // namespace

// ------------------------------------------------------------------------------------------
// The C API.

TGL_LOADER_EXPORT tgl_status tgl_plugin_load(const char* name_or_path, tgl_plugin** out) {
    if (!out) return fail(TGL_ERROR_NULL_POINTER, "tgl_plugin_load: out is NULL");
    *out = nullptr;
    if (!name_or_path) return fail(TGL_ERROR_NULL_POINTER, "tgl_plugin_load: name_or_path is NULL");
    std::string arg = name_or_path;
    try {
        std::lock_guard<std::mutex> lock(registry_mutex());
        if (arg.find('/') != std::string::npos) {
            debug("loading plugin from the explicit path %s", arg.c_str());
            return load_file(arg, out);
        }
        if (!valid_name(arg))
            return fail(TGL_ERROR_INVALID_ARGUMENT,
                        "tgl_plugin_load: '%s' is neither a path (no '/') nor a plugin name "
                        "(letters, digits, '_', '-', '.', not starting with '.')",
                        arg.c_str());
        return load_by_name(arg, out);
    } catch (const std::bad_alloc&) {
        return fail(TGL_ERROR_RESOURCE_EXHAUSTED, "tgl_plugin_load: out of host memory");
    } catch (const std::exception& e) {
        return fail(TGL_ERROR_INTERNAL, "tgl_plugin_load: internal error: %s", e.what());
    }
}

TGL_LOADER_EXPORT void tgl_plugin_release(tgl_plugin* plugin) {
    if (!plugin) return;
    std::lock_guard<std::mutex> lock(registry_mutex());
    if (plugin->refs > 0) --plugin->refs;
}

TGL_LOADER_EXPORT const tgl_plugin_api* tgl_plugin_get_api(const tgl_plugin* plugin) {
    return plugin ? plugin->api : nullptr;
}

TGL_LOADER_EXPORT uint32_t tgl_plugin_abi_minor(const tgl_plugin* plugin) {
    return plugin ? plugin->negotiated_minor : 0;
}

TGL_LOADER_EXPORT const char* tgl_plugin_path(const tgl_plugin* plugin) {
    return plugin ? plugin->path.c_str() : nullptr;
}

TGL_LOADER_EXPORT const char* tgl_plugin_name(const tgl_plugin* plugin) {
    return plugin ? plugin->name.c_str() : nullptr;
}

TGL_LOADER_EXPORT const char* tgl_loader_last_error(void) { return t_last_error.c_str(); }

TGL_LOADER_EXPORT tgl_status tgl_plugin_list(const char** names, const char** paths,
                                             size_t capacity, size_t* count) {
    if (!count) return fail(TGL_ERROR_NULL_POINTER, "tgl_plugin_list: count is NULL");
    *count = 0;
    try {
        SearchPath sp = search_path();
        std::vector<std::string> found_names, found_paths;
        const size_t plen = sizeof kPrefix - 1, slen = sizeof kSuffix - 1;
        for (const std::string& dir : sp.dirs) {
            DIR* d = ::opendir(dir.c_str());
            if (!d) {
                debug("list: directory %s skipped: %s", dir.c_str(), std::strerror(errno));
                continue;
            }
            std::vector<std::string> here;
            while (struct dirent* e = ::readdir(d)) {
                std::string fn = e->d_name;
                if (fn.size() <= plen + slen || fn.compare(0, plen, kPrefix) != 0 ||
                    fn.compare(fn.size() - slen, slen, kSuffix) != 0)
                    continue;
                here.push_back(fn);
            }
            ::closedir(d);
            std::sort(here.begin(), here.end());
            for (const std::string& fn : here) {
                std::string name = fn.substr(plen, fn.size() - plen - slen);
                std::string path = (dir == "/" ? "" : dir) + "/" + fn;
                struct stat st;
                if (!valid_name(name) || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
                    debug("list: %s skipped: not a regular file with a valid plugin name",
                          path.c_str());
                    continue;
                }
                auto it = std::find(found_names.begin(), found_names.end(), name);
                if (it != found_names.end()) {
                    debug("list: %s skipped: shadowed by %s", path.c_str(),
                          found_paths[static_cast<size_t>(it - found_names.begin())].c_str());
                    continue;
                }
                debug("list: found plugin '%s' at %s", name.c_str(), path.c_str());
                found_names.push_back(name);
                found_paths.push_back(path);
            }
        }
        t_list_names.swap(found_names);
        t_list_paths.swap(found_paths);
        for (size_t i = 0; i < t_list_names.size() && i < capacity; ++i) {
            if (names) names[i] = t_list_names[i].c_str();
            if (paths) paths[i] = t_list_paths[i].c_str();
        }
        *count = t_list_names.size();
        return TGL_OK;
    } catch (const std::bad_alloc&) {
        return fail(TGL_ERROR_RESOURCE_EXHAUSTED, "tgl_plugin_list: out of host memory");
    } catch (const std::exception& e) {
        return fail(TGL_ERROR_INTERNAL, "tgl_plugin_list: internal error: %s", e.what());
    }
}

TGL_LOADER_EXPORT const char* tgl_device_property(const tgl_plugin* plugin, uint32_t device_index,
                                                  const char* name) {
    if (!plugin) {
        fail(TGL_ERROR_NULL_POINTER, "tgl_device_property: plugin is NULL");
        return nullptr;
    }
    if (!name) {
        fail(TGL_ERROR_NULL_POINTER, "tgl_device_property: name is NULL");
        return nullptr;
    }
    const tgl_property* props = nullptr;
    uint32_t n = 0;
    tgl_status s = plugin->api->device_properties(device_index, &props, &n);
    if (s != TGL_OK) {
        std::string msg = plugin_message(plugin->api);
        fail(s, "tgl_device_property: plugin '%s' device_properties(%u) failed with %s%s%s",
             plugin->name.c_str(), device_index, tgl_status_name(s), msg.empty() ? "" : ": ",
             msg.c_str());
        return nullptr;
    }
    for (uint32_t i = 0; props && i < n; ++i)
        if (props[i].name && props[i].value && std::strcmp(props[i].name, name) == 0)
            return props[i].value;
    return nullptr;
}
