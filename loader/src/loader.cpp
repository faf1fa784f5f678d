// libtensorgl: finds plugins, checks them, dlopens them and hands out verified function tables.
// The contract is documented in tensorgl/loader.h; the order of the checks follows
// shared/research/abi.md section 7 ("Checks before trusting a plugin").
#include <tensorgl/loader.h>

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
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
// The registry: loaded plugins, every library the loader mapped, and the loads in progress.
// Intentionally leaked (never destroyed at exit), like the libraries themselves. The mutex is
// never held while plugin code runs (dlopen runs its constructors, then the entry point and
// get_plugin_info), so a plugin may call tgl_plugin_load from its own initialisation.

// A load in progress: one thread runs the plugin's code for this file; others wait for it.
struct Loading {
    dev_t dev;
    ino_t ino;
    std::string file;
    std::thread::id owner;
};

// A library the loader mapped. It is never unloaded (its constructors have run), and `fd` stays
// open for the life of the process: glibc knows the library by the name it was opened under,
// /proc/self/fd/<fd>, which must never come to mean another file.
struct Mapped {
    dev_t dev;
    ino_t ino;
    int fd;
    void* handle;
};

struct Registry {
    std::mutex mutex;
    std::condition_variable load_finished;
    std::vector<tgl_plugin*> plugins;
    std::vector<Mapped> mapped;
    std::vector<const Loading*> loading;
    // Threads waiting for a load, and the load; an entry leaves when its load ends.
    std::vector<std::pair<std::thread::id, const Loading*>> waiting;
};

Registry& registry() {
    static Registry* r = new Registry;
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

// A search directory or candidate file passed over, and why (tgl_plugin_list_skipped).
struct Skipped {
    std::string path;
    std::string reason;
};

struct SearchPath {
    std::vector<std::string> dirs;
    std::string origin;              // "TGL_PLUGIN_PATH" or "defaults"
    std::vector<Skipped> skipped;    // TGL_PLUGIN_PATH elements that are not searched
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
                sp.skipped.push_back({elem, "relative directory in TGL_PLUGIN_PATH: relative "
                                            "directories are never searched"});
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
// Who may change the plugin: the path checks.
//
// Trusted are root and the process's effective user (either could change the plugin anyway).
// Whoever else may write a directory the path passes through (the path as given, and the target
// of every symlink on it) could replace the entry below it, and so the plugin: every such
// directory and symlink, and the file, must be owned by a trusted user, and no directory may be
// writable by others unless it is sticky (then only an entry's owner may replace it).

bool trusted_uid(uid_t uid) { return uid == 0 || uid == ::geteuid(); }

// A group's write permission gives nothing away for root's group and the process's own effective
// group (the user private group that umask 002 on Debian and Ubuntu makes group-writable).
bool trusted_gid(gid_t gid) { return gid == 0 || gid == ::getegid(); }

// Who besides the trusted users may write `st`, in words (empty: nobody), and the chmod that
// takes that permission away.
struct OtherWriters {
    std::string who;
    const char* chmod = "";
};
OtherWriters other_writers(const struct stat& st) {
    if (st.st_mode & S_IWOTH) return {"world-writable", "o-w"};
    if ((st.st_mode & S_IWGRP) && !trusted_gid(st.st_gid))
        return {format("writable by group %u", static_cast<unsigned>(st.st_gid)), "g-w"};
    return {};
}

std::deque<std::string> split_path(const std::string& path) {
    std::deque<std::string> parts;
    size_t start = 0;
    while (start <= path.size()) {
        size_t slash = path.find('/', start);
        if (slash == std::string::npos) slash = path.size();
        if (slash > start) parts.push_back(path.substr(start, slash - start));
        start = slash + 1;
    }
    return parts;
}

bool read_link(const std::string& path, std::string* out) {
    std::vector<char> buf(256);
    for (;;) {
        ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
        if (n < 0) return false;
        if (static_cast<size_t>(n) < buf.size()) {
            out->assign(buf.data(), static_cast<size_t>(n));
            return true;
        }
        buf.resize(buf.size() * 2);
    }
}

// How the plugin is named in the messages of the path checks: as given, and where it leads.
std::string label_of(const std::string& given) {
    std::string real;
    if (realpath_of(given, &real) && real != given) return given + " (resolves to " + real + ")";
    return given;
}

// Resolves `given` one component at a time, as the kernel does, and checks every directory it
// looks a name up in and every symlink it follows. Sets *resolved to the absolute path of the
// last component (symlinks resolved) and *last to its lstat.
tgl_status walk_path(const std::string& given, std::string* resolved, struct stat* last) {
    std::string start = given;
    if (start.empty() || start[0] != '/') {
        char* cwd = ::getcwd(nullptr, 0);
        if (!cwd)
            return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                        "%s: cannot resolve a relative path: the current directory is unknown (%s)",
                        given.c_str(), std::strerror(errno));
        start = std::string(cwd) + "/" + start;
        std::free(cwd);
    }
    const std::string label = label_of(given);
    const unsigned euid = ::geteuid();
    std::deque<std::string> todo = split_path(start);
    std::string dir = "/";
    int links = 0;
    while (!todo.empty()) {
        const std::string name = todo.front();
        todo.pop_front();
        if (name == ".") continue;
        if (name == "..") {  // `dir` has no symlinks left: its parent is its dirname
            dir = dirname_of(dir);
            continue;
        }
        const std::string entry = (dir == "/" ? "" : dir) + "/" + name;
        struct stat st;
        if (::lstat(entry.c_str(), &st) != 0) {
            int err = errno;
            if (err == ENOENT || err == ENOTDIR)
                return fail(TGL_ERROR_PLUGIN_NOT_FOUND, "%s: no such file (%s: %s)", given.c_str(),
                            entry.c_str(), std::strerror(err));
            return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE, "%s: cannot stat %s: %s", given.c_str(),
                        entry.c_str(), std::strerror(err));
        }
        const bool is_last = todo.empty();
        const char* what = S_ISLNK(st.st_mode)  ? "a symlink on its path"
                           : S_ISDIR(st.st_mode) ? "a directory on its path"
                                                 : "the plugin file";
        struct stat dst;
        if (::lstat(dir.c_str(), &dst) != 0)
            return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE, "%s: cannot stat %s: %s", given.c_str(),
                        dir.c_str(), std::strerror(errno));
        if (!trusted_uid(dst.st_uid))
            return fail(TGL_ERROR_PLUGIN_INSECURE,
                        "%s: refusing to load: directory %s is owned by uid %u, who could replace "
                        "'%s' (%s) in it; only root or this process's user (uid %u) may own the "
                        "directories on a plugin's path",
                        label.c_str(), dir.c_str(), static_cast<unsigned>(dst.st_uid), name.c_str(),
                        what, euid);
        OtherWriters w = other_writers(dst);
        if (!w.who.empty() && !(dst.st_mode & S_ISVTX))
            return fail(TGL_ERROR_PLUGIN_INSECURE,
                        "%s: refusing to load: its %sdirectory %s is %s (mode %04o) and not sticky, "
                        "so others could replace '%s' (%s) in it; remove that permission (chmod %s "
                        "%s) or make the directory sticky (chmod +t)",
                        label.c_str(), is_last ? "" : "parent ", dir.c_str(), w.who.c_str(),
                        static_cast<unsigned>(dst.st_mode & 07777), name.c_str(), what, w.chmod,
                        dir.c_str());
        if (S_ISLNK(st.st_mode)) {
            // A symlink is replaced, never changed, so its directory's checks cover it; its owner
            // matters in a sticky directory, where the owner may replace it.
            if (!trusted_uid(st.st_uid))
                return fail(TGL_ERROR_PLUGIN_INSECURE,
                            "%s: refusing to load: the symlink %s on its path is owned by uid %u, "
                            "who could point it elsewhere; only root or this process's user (uid "
                            "%u) may own it",
                            label.c_str(), entry.c_str(), static_cast<unsigned>(st.st_uid), euid);
            if (++links > 40)
                return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                            "%s: too many symbolic links on its path (more than 40; a loop?)",
                            given.c_str());
            std::string target;
            if (!read_link(entry, &target))
                return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE, "%s: cannot read the symlink %s: %s",
                            given.c_str(), entry.c_str(), std::strerror(errno));
            std::deque<std::string> parts = split_path(target);
            todo.insert(todo.begin(), parts.begin(), parts.end());
            if (!target.empty() && target[0] == '/') dir = "/";
            continue;
        }
        if (!is_last) {
            if (!S_ISDIR(st.st_mode))
                return fail(TGL_ERROR_PLUGIN_NOT_FOUND, "%s: no such file (%s is not a directory)",
                            given.c_str(), entry.c_str());
            dir = entry;
            continue;
        }
        *resolved = entry;
        *last = st;
        return TGL_OK;
    }
    // The path names a directory ("/", or it ends in "." or "..").
    *resolved = dir;
    return ::lstat(dir.c_str(), last) == 0
               ? TGL_OK
               : fail(TGL_ERROR_PLUGIN_NOT_LOADABLE, "%s: cannot stat %s: %s", given.c_str(),
                      dir.c_str(), std::strerror(errno));
}

// Closes a descriptor unless released.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    int get() const { return fd_; }
    int release() {
        int fd = fd_;
        fd_ = -1;
        return fd;
    }
    void reset(int fd) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

// The plugin file, opened once: every later check reads this descriptor, and the library is
// mapped through it, so the file checked is the file loaded.
struct CheckedFile {
    std::string path;  // absolute, symlinks resolved
    Fd fd;
    struct stat st;  // fstat of fd
};

tgl_status open_checked(const std::string& given, CheckedFile* out) {
    struct stat lst;
    tgl_status s = walk_path(given, &out->path, &lst);
    if (s != TGL_OK) return s;
    const char* file = out->path.c_str();
    if (!S_ISREG(lst.st_mode))
        return fail(TGL_ERROR_PLUGIN_INSECURE, "%s: refusing to load: not a regular file (%s)", file,
                    S_ISDIR(lst.st_mode) ? "a directory" : "a device, FIFO or socket");
    // O_NONBLOCK: should a FIFO take the file's place after the walk, open does not wait for it.
    out->fd.reset(::open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (out->fd.get() < 0)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE, "%s: cannot be opened for reading: %s", file,
                    std::strerror(errno));
    struct stat& st = out->st;
    if (::fstat(out->fd.get(), &st) != 0)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE, "%s: cannot stat the open file: %s", file,
                    std::strerror(errno));
    if (!S_ISREG(st.st_mode) || st.st_dev != lst.st_dev || st.st_ino != lst.st_ino)
        return fail(TGL_ERROR_PLUGIN_INSECURE,
                    "%s: refusing to load: the file was replaced while it was being checked", file);
    if (!trusted_uid(st.st_uid))
        return fail(TGL_ERROR_PLUGIN_INSECURE,
                    "%s: refusing to load: the file is owned by uid %u, who could change it; only "
                    "root or this process's user (uid %u) may own a plugin",
                    file, static_cast<unsigned>(st.st_uid), static_cast<unsigned>(::geteuid()));
    OtherWriters w = other_writers(st);
    if (!w.who.empty())
        return fail(TGL_ERROR_PLUGIN_INSECURE,
                    "%s: refusing to load: the file is %s (mode %04o); remove that write "
                    "permission (chmod %s)",
                    file, w.who.c_str(), static_cast<unsigned>(st.st_mode & 07777), w.chmod);
    return TGL_OK;
}

// ------------------------------------------------------------------------------------------
// The ELF file.

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

// Reads up to n bytes at `offset`; returns how many it got.
size_t read_at(int fd, void* buf, size_t n, off_t offset) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = ::pread(fd, static_cast<char*>(buf) + got, n - got,
                            offset + static_cast<off_t>(got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += static_cast<size_t>(r);
    }
    return got;
}

const char* segment_type_name(uint32_t t) {
    switch (t) {
    case PT_LOAD: return "PT_LOAD";
    case PT_DYNAMIC: return "PT_DYNAMIC";
    case PT_INTERP: return "PT_INTERP";
    case PT_NOTE: return "PT_NOTE";
    case PT_TLS: return "PT_TLS";
    case PT_GNU_EH_FRAME: return "PT_GNU_EH_FRAME";
    case PT_GNU_RELRO: return "PT_GNU_RELRO";
    default: return "segment";
    }
}

// The file's metadata before dlopen, read from the open file: ELF magic, class, byte order,
// type and machine, then the program headers: every segment's bytes must lie inside the file.
// dlopen maps segments without that check, and a segment that reaches past the end of a
// truncated file kills the process with SIGBUS when it is touched. A file that fails fails with
// TGL_ERROR_PLUGIN_NOT_LOADABLE here, with a reason a person can act on.
tgl_status check_elf(const char* file, int fd, uint64_t file_size) {
    unsigned char hdr[sizeof(ElfW(Ehdr))];
    const size_t n = read_at(fd, hdr, sizeof hdr, 0);
    if (n < SELFMAG || std::memcmp(hdr, ELFMAG, SELFMAG) != 0)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                    "%s: not an ELF shared object (%s; an ELF file starts with 7f 45 4c 46)",
                    file, describe_bytes(hdr, std::min<size_t>(n, 4)).c_str());
    const unsigned native_class = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
    if (n <= EI_DATA || hdr[EI_CLASS] != native_class)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                    "%s: wrong ELF class: the file is %s, this process is %s", file,
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
                    file, hdr[EI_DATA] == ELFDATA2LSB ? "little" : "big",
                    native_data == ELFDATA2LSB ? "little" : "big");
    if (n < sizeof(ElfW(Ehdr)))
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                    "%s: truncated ELF header (%zu bytes of %zu)", file, n, sizeof(ElfW(Ehdr)));
    ElfW(Ehdr) eh;
    std::memcpy(&eh, hdr, sizeof eh);
    if (eh.e_type != ET_DYN)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                    "%s: not a shared object: its ELF type is %s (%u)", file,
                    elf_type_name(eh.e_type), static_cast<unsigned>(eh.e_type));
#ifdef TGL_NATIVE_MACHINE
    if (eh.e_machine != TGL_NATIVE_MACHINE)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                    "%s: built for another CPU: ELF machine %u (%s), this process runs on %u (%s)",
                    file, static_cast<unsigned>(eh.e_machine), machine_name(eh.e_machine),
                    static_cast<unsigned>(TGL_NATIVE_MACHINE), machine_name(TGL_NATIVE_MACHINE));
#endif
    if (eh.e_phentsize != sizeof(ElfW(Phdr)))
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                    "%s: damaged ELF header: program header entries of %u bytes, expected %zu",
                    file, static_cast<unsigned>(eh.e_phentsize), sizeof(ElfW(Phdr)));
    if (eh.e_phnum == 0 || eh.e_phnum == PN_XNUM)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                    "%s: damaged ELF header: %u program headers", file,
                    static_cast<unsigned>(eh.e_phnum));
    const uint64_t ph_bytes = uint64_t{eh.e_phnum} * sizeof(ElfW(Phdr));
    if (eh.e_phoff > file_size || ph_bytes > file_size - eh.e_phoff)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                    "%s: truncated or damaged: its program headers (file bytes %llu to %llu) end "
                    "past the end of the file (%llu bytes)",
                    file, static_cast<unsigned long long>(eh.e_phoff),
                    static_cast<unsigned long long>(eh.e_phoff + ph_bytes),
                    static_cast<unsigned long long>(file_size));
    std::vector<ElfW(Phdr)> ph(eh.e_phnum);
    if (read_at(fd, ph.data(), ph_bytes, static_cast<off_t>(eh.e_phoff)) != ph_bytes)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE, "%s: cannot read its program headers", file);
    for (size_t i = 0; i < ph.size(); ++i) {
        const ElfW(Phdr)& p = ph[i];
        if (p.p_filesz != 0 && (p.p_offset > file_size || p.p_filesz > file_size - p.p_offset))
            return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                        "%s: truncated or damaged: segment %zu (%s, file bytes %llu to %llu) ends "
                        "past the end of the file (%llu bytes); mapping it would crash the process",
                        file, i, segment_type_name(p.p_type),
                        static_cast<unsigned long long>(p.p_offset),
                        static_cast<unsigned long long>(p.p_offset) +
                            static_cast<unsigned long long>(p.p_filesz),
                        static_cast<unsigned long long>(file_size));
    }
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
// Required in a table whose abi_minor is 3 or more.
const RequiredMember kRequiredV1_3[] = {TGL_MEMBER(graph_replay_with)};
#undef TGL_MEMBER
static_assert(sizeof(kRequiredV1_3) / sizeof(kRequiredV1_3[0]) ==
                  (TGL_PLUGIN_API_SIZE_V1_3 - TGL_PLUGIN_API_SIZE_V1_2) / sizeof(void*),
              "every v1.3 member of tgl_plugin_api must be listed as required");
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
    {3, TGL_PLUGIN_API_SIZE_V1_3, std::begin(kRequiredV1_3), std::end(kRequiredV1_3)},
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

// The plugin's message after a failing call, from a table the loader has verified (its own copy).
std::string plugin_message(const tgl_plugin_api* api) {
    if (!api || !api->last_error_message) return {};
    const char* m = api->last_error_message();
    return m ? m : "";
}

// ------------------------------------------------------------------------------------------
// The mapped library: its memory, its entry point, its table.

// The memory a library's readable PT_LOAD segments occupy, as mapped.
struct Segment {
    uintptr_t begin, end;
    bool exec;
};
struct Image {
    Segment segments[32];
    size_t count = 0;

    // [p, p + n) lies inside one segment (an executable one if `exec`).
    bool holds(const void* p, size_t n, bool exec) const {
        const uintptr_t a = reinterpret_cast<uintptr_t>(p);
        for (size_t i = 0; i < count; ++i)
            if (a >= segments[i].begin && a < segments[i].end && n <= segments[i].end - a &&
                (!exec || segments[i].exec))
                return true;
        return false;
    }
};

Image image_of(void* handle) {
    struct Search {
        const link_map* map;
        Image image;
    } search{nullptr, {}};
    link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map) return {};
    search.map = map;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            Search* s = static_cast<Search*>(data);
            if (info->dlpi_addr != s->map->l_addr || !info->dlpi_name || !s->map->l_name ||
                std::strcmp(info->dlpi_name, s->map->l_name) != 0)
                return 0;
            for (ElfW(Half) i = 0; i < info->dlpi_phnum && s->image.count < 32; ++i) {
                const ElfW(Phdr)& p = info->dlpi_phdr[i];
                if (p.p_type != PT_LOAD || !(p.p_flags & PF_R)) continue;
                const uintptr_t begin = info->dlpi_addr + p.p_vaddr;
                s->image.segments[s->image.count++] = {begin, begin + p.p_memsz,
                                                       (p.p_flags & PF_X) != 0};
            }
            return 1;
        },
        &search);
    return search.image;
}

const char* symbol_type_name(unsigned t) {
    switch (t) {
    case STT_NOTYPE: return "a symbol without a type (STT_NOTYPE)";
    case STT_OBJECT: return "a data object (STT_OBJECT)";
    case STT_SECTION: return "a section (STT_SECTION)";
    case STT_FILE: return "a file name (STT_FILE)";
    case STT_COMMON: return "a common data object (STT_COMMON)";
    case STT_TLS: return "thread-local data (STT_TLS)";
    default: return "not a function";
    }
}

// The entry point, once it is known to be a function of the library.
tgl_status entry_point(void* handle, const char* file, tgl_plugin_init_v1_fn* out) {
    dlerror();
    void* sym = dlsym(handle, TGL_PLUGIN_ENTRY_NAME);
    if (!sym)
        return fail(TGL_ERROR_PLUGIN_NO_ENTRY,
                    "symbol " TGL_PLUGIN_ENTRY_NAME " not found in %s (not a tensorgl ABI 1 "
                    "plugin: a plugin exports exactly this one symbol); the library stays loaded, "
                    "since its constructors have run",
                    file);
    Dl_info info;
    void* symbol_entry = nullptr;
    const int found = dladdr1(sym, &info, &symbol_entry, RTLD_DL_SYMENT);
    const ElfW(Sym)* entry = static_cast<const ElfW(Sym)*>(symbol_entry);
    if (!found || !entry)
        return fail(TGL_ERROR_PLUGIN_NO_ENTRY,
                    "%s: the address of " TGL_PLUGIN_ENTRY_NAME " lies in no symbol of the "
                    "library, so its type is unknown; refusing to call it",
                    file);
    const unsigned type = ELF64_ST_TYPE(entry->st_info);  // the same in both classes
    if (type != STT_FUNC && type != STT_GNU_IFUNC)
        return fail(TGL_ERROR_PLUGIN_NO_ENTRY,
                    "%s: " TGL_PLUGIN_ENTRY_NAME " is %s, not a function (STT_FUNC); refusing to "
                    "call it",
                    file, symbol_type_name(type));
    std::memcpy(out, &sym, sizeof *out);
    return TGL_OK;
}

// What is wrong with a table from tgl_plugin_init_v1 before any member is read (status TGL_OK:
// nothing): it must lie inside the plugin's own memory (plugin_api.h: the plugin returns its
// static table), aligned, say ABI 1 and be at least the v1.0 size, all inside that memory.
struct TableFault {
    tgl_status status;
    std::string why;
};
TableFault table_header_fault(const tgl_plugin_api* api, const Image& image) {
    if (!api)
        return {TGL_ERROR_PLUGIN_INIT_FAILED, TGL_PLUGIN_ENTRY_NAME " returned TGL_OK but no function table"};
    if (reinterpret_cast<uintptr_t>(api) % alignof(tgl_plugin_api) != 0 || !image.holds(api, 16, false))
        return {TGL_ERROR_PLUGIN_BAD_TABLE,
                format(TGL_PLUGIN_ENTRY_NAME " returned a function table at %p, which is not an "
                       "aligned address inside the plugin's own memory (the table must be static "
                       "storage of the plugin)",
                       static_cast<const void*>(api))};
    if (api->abi_major != TGL_ABI_MAJOR)
        return {TGL_ERROR_PLUGIN_ABI_MISMATCH,
                format("plugin ABI %u.%u, loader needs %u.x", api->abi_major, api->abi_minor,
                       static_cast<unsigned>(TGL_ABI_MAJOR))};
    if (api->struct_size < TGL_PLUGIN_API_SIZE_V1_0)
        return {TGL_ERROR_PLUGIN_BAD_TABLE,
                format("function table is %llu bytes, smaller than the %u bytes of ABI 1.0",
                       static_cast<unsigned long long>(api->struct_size),
                       static_cast<unsigned>(TGL_PLUGIN_API_SIZE_V1_0))};
    const size_t readable = std::min<uint64_t>(api->struct_size, sizeof(tgl_plugin_api));
    if (!image.holds(api, readable, false))
        return {TGL_ERROR_PLUGIN_BAD_TABLE,
                format("function table of %llu bytes at %p reaches past the plugin's own memory",
                       static_cast<unsigned long long>(api->struct_size),
                       static_cast<const void*>(api))};
    return {TGL_OK, {}};
}

// The plugin's own message after its entry point failed: only from a table without a fault,
// through a last_error_message that is code of the plugin; else "".
std::string message_of_failed_init(const tgl_plugin_api* api, const Image& image) {
    if (table_header_fault(api, image).status != TGL_OK || !api->last_error_message ||
        !image.holds(reinterpret_cast<const void*>(api->last_error_message), 1, true))
        return {};
    const char* m = api->last_error_message();
    return m ? m : "";
}

// ------------------------------------------------------------------------------------------
// Loading one file.

// Callers hold the registry mutex.
tgl_plugin* find_loaded(dev_t dev, ino_t ino) {
    for (tgl_plugin* p : registry().plugins)
        if (p->dev == dev && p->ino == ino) return p;
    return nullptr;
}

tgl_plugin* find_loaded_name(const std::string& name) {
    for (tgl_plugin* p : registry().plugins)
        if (p->name == name) return p;
    return nullptr;
}

const Loading* find_loading(dev_t dev, ino_t ino) {
    for (const Loading* l : registry().loading)
        if (l->dev == dev && l->ino == ino) return l;
    return nullptr;
}

// If waiting for `busy` would close a circle of threads each waiting for a load that the next
// one runs (each plugin's init loading the next plugin), the circle in words; else "".
std::string wait_cycle(const Loading* busy, std::thread::id me) {
    std::string chain;
    std::vector<const Loading*> seen;
    for (const Loading* l = busy; l && std::find(seen.begin(), seen.end(), l) == seen.end();) {
        seen.push_back(l);
        chain += (chain.empty() ? "" : ", whose initialisation waits for ") + l->file;
        if (l->owner == me) return chain;
        const Loading* next = nullptr;
        for (const auto& w : registry().waiting)
            if (w.first == l->owner) next = w.second;
        l = next;
    }
    return {};
}

// Maps the checked file through its descriptor (/proc/self/fd/N names exactly the file that was
// checked, whatever happens to its path meanwhile), or finds it mapped by an earlier attempt.
tgl_status map_library(CheckedFile& cf, void** handle) {
    Registry& reg = registry();
    {
        std::lock_guard<std::mutex> lock(reg.mutex);
        for (const Mapped& m : reg.mapped)
            if (m.dev == cf.st.st_dev && m.ino == cf.st.st_ino) {
                *handle = m.handle;
                return TGL_OK;
            }
        // A descriptor of ours that the host closed behind our back: its number names a mapped
        // library to glibc. Take a number no library is named after.
        int highest = -1;
        bool clash = false;
        for (const Mapped& m : reg.mapped) {
            highest = std::max(highest, m.fd);
            clash = clash || m.fd == cf.fd.get();
        }
        if (clash) {
            int moved = ::fcntl(cf.fd.get(), F_DUPFD_CLOEXEC, highest + 1);
            if (moved < 0)
                return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE, "%s: cannot duplicate its descriptor: %s",
                            cf.path.c_str(), std::strerror(errno));
            cf.fd.reset(moved);
        }
    }
    const std::string via = "/proc/self/fd/" + std::to_string(cf.fd.get());
    struct stat st;
    if (::stat(via.c_str(), &st) != 0 || st.st_dev != cf.st.st_dev || st.st_ino != cf.st.st_ino)
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE,
                    "%s: cannot map it through its open descriptor (%s does not lead to it; is "
                    "/proc mounted?): the loader maps exactly the file it checked",
                    cf.path.c_str(), via.c_str());
    dlerror();
    void* h = dlopen(via.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* why = dlerror();
        return fail(TGL_ERROR_PLUGIN_NOT_LOADABLE, "%s: dlopen failed: %s", cf.path.c_str(),
                    why ? why : "(no reason given)");
    }
    debug("  %s: mapped through %s", cf.path.c_str(), via.c_str());
    std::lock_guard<std::mutex> lock(reg.mutex);
    reg.mapped.push_back({cf.st.st_dev, cf.st.st_ino, cf.fd.release(), h});
    *handle = h;
    return TGL_OK;
}

// Everything that runs the plugin's code: mapping (its constructors), the entry point,
// get_plugin_info, and the checks of what they return. Runs without the registry mutex; the
// caller has claimed the file (a Loading record), so no other thread runs this for it meanwhile.
tgl_status run_plugin(CheckedFile& cf, std::unique_ptr<tgl_plugin>* out) {
    const char* file = cf.path.c_str();
    void* handle = nullptr;
    tgl_status s = map_library(cf, &handle);
    if (s != TGL_OK) return s;
    // From here on the plugin's code has run: it is never dlclose'd, whatever happens.
    tgl_plugin_init_v1_fn init = nullptr;
    s = entry_point(handle, file, &init);
    if (s != TGL_OK) return s;
    const Image image = image_of(handle);

    const tgl_plugin_api* api = nullptr;
    tgl_status st_init = init(TGL_ABI_MINOR, &api);
    if (st_init != TGL_OK) {
        std::string msg = message_of_failed_init(api, image);
        return fail(TGL_ERROR_PLUGIN_INIT_FAILED, "%s: " TGL_PLUGIN_ENTRY_NAME " failed with %s%s%s",
                    file, tgl_status_name(st_init), msg.empty() ? "" : ": ", msg.c_str());
    }
    TableFault fault = table_header_fault(api, image);
    if (fault.status != TGL_OK) return fail(fault.status, "%s: %s", file, fault.why.c_str());
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

    std::unique_ptr<tgl_plugin> p(new tgl_plugin);
    p->path = cf.path;
    p->name = info.name;
    p->version = info.version ? info.version : "";
    p->dev = cf.st.st_dev;
    p->ino = cf.st.st_ino;
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
    *out = std::move(p);
    return TGL_OK;
}

// Loads `given` (a path) with every check.
tgl_status load_file(const std::string& given, tgl_plugin** out) {
    CheckedFile cf;
    tgl_status s = open_checked(given, &cf);
    if (s != TGL_OK) return s;
    const char* file = cf.path.c_str();
    if (cf.path != given) debug("  %s resolves to %s", given.c_str(), file);
    s = check_elf(file, cf.fd.get(), static_cast<uint64_t>(cf.st.st_size));
    if (s != TGL_OK) return s;

    Registry& reg = registry();
    const std::thread::id me = std::this_thread::get_id();
    std::unique_lock<std::mutex> lock(reg.mutex);
    for (;;) {
        if (tgl_plugin* p = find_loaded(cf.st.st_dev, cf.st.st_ino)) {
            ++p->refs;
            debug("  %s: already loaded as plugin '%s'; same handle (references: %ld)", file,
                  p->name.c_str(), p->refs);
            *out = p;
            return TGL_OK;
        }
        const Loading* busy = find_loading(cf.st.st_dev, cf.st.st_ino);
        if (!busy) break;
        if (busy->owner == me)
            return fail(TGL_ERROR_PLUGIN_INIT_FAILED,
                        "%s: tgl_plugin_load was called for this plugin while this thread is "
                        "loading it (from its own constructors, " TGL_PLUGIN_ENTRY_NAME " or "
                        "get_plugin_info); a plugin cannot be loaded before its own load finishes",
                        file);
        std::string cycle = wait_cycle(busy, me);
        if (!cycle.empty())
            return fail(TGL_ERROR_PLUGIN_INIT_FAILED,
                        "%s: circular plugin loads: it is being loaded by another thread, "
                        "waiting for %s, which this thread is loading; refusing this load so that "
                        "no thread waits for ever",
                        file, cycle.c_str());
        debug("  %s: being loaded by another thread; waiting for it", file);
        reg.waiting.emplace_back(me, busy);
        reg.load_finished.wait(lock);
        auto w = std::find(reg.waiting.begin(), reg.waiting.end(), std::make_pair(me, busy));
        if (w != reg.waiting.end()) reg.waiting.erase(w);  // else `busy` ended and took it away
    }

    // Claim the file, and run the plugin's code without the mutex.
    const Loading mine{cf.st.st_dev, cf.st.st_ino, cf.path, me};
    reg.loading.push_back(&mine);
    struct Release {  // the claim ends on every way out, exceptions included
        Registry& reg;
        std::unique_lock<std::mutex>& lock;
        const Loading* mine;
        ~Release() {
            if (!lock.owns_lock()) lock.lock();
            reg.loading.erase(std::find(reg.loading.begin(), reg.loading.end(), mine));
            // Nobody waits for an ended load: `waiting` only ever points at live claims.
            reg.waiting.erase(std::remove_if(reg.waiting.begin(), reg.waiting.end(),
                                             [&](const auto& w) { return w.second == mine; }),
                              reg.waiting.end());
            reg.load_finished.notify_all();
        }
    } release{reg, lock, &mine};
    lock.unlock();
    std::unique_ptr<tgl_plugin> p;
    s = run_plugin(cf, &p);
    lock.lock();
    if (s != TGL_OK) return s;
    if (tgl_plugin* other = find_loaded_name(p->name))
        return fail(TGL_ERROR_PLUGIN_DUPLICATE,
                    "%s: a plugin named '%s' is already loaded from %s; two plugins of one name "
                    "cannot be loaded at once",
                    file, p->name.c_str(), other->path.c_str());
    reg.plugins.push_back(p.get());
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

// Per-thread storage for the strings of tgl_plugin_list, tgl_plugin_list_skipped and
// tgl_plugin_search_dirs.
thread_local std::vector<std::string> t_list_names, t_list_paths;
thread_local std::vector<Skipped> t_list_skipped;
thread_local std::vector<std::string> t_search_dirs;
thread_local std::string t_search_origin;


}  // namespace

// ------------------------------------------------------------------------------------------
// The C API.

TGL_LOADER_EXPORT tgl_status tgl_plugin_load(const char* name_or_path, tgl_plugin** out) {
    if (!out) return fail(TGL_ERROR_NULL_POINTER, "tgl_plugin_load: out is NULL");
    *out = nullptr;
    if (!name_or_path) return fail(TGL_ERROR_NULL_POINTER, "tgl_plugin_load: name_or_path is NULL");
    std::string arg = name_or_path;
    try {
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
    std::lock_guard<std::mutex> lock(registry().mutex);
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
        std::vector<Skipped> skipped = sp.skipped;
        const size_t plen = sizeof kPrefix - 1, slen = sizeof kSuffix - 1;
        for (const std::string& dir : sp.dirs) {
            DIR* d = ::opendir(dir.c_str());
            if (!d) {
                debug("list: directory %s skipped: %s", dir.c_str(), std::strerror(errno));
                skipped.push_back({dir, format("search directory cannot be read: %s",
                                               std::strerror(errno))});
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
                std::string why;
                if (!valid_name(name))
                    why = format("'%s' is not a plugin name (letters, digits, '_', '-', '.', not "
                                 "starting with '.')",
                                 name.c_str());
                else if (::stat(path.c_str(), &st) != 0)
                    why = format("cannot stat: %s", std::strerror(errno));
                else if (!S_ISREG(st.st_mode))
                    why = "not a regular file";
                if (!why.empty()) {
                    debug("list: %s skipped: %s", path.c_str(), why.c_str());
                    skipped.push_back({path, why});
                    continue;
                }
                auto it = std::find(found_names.begin(), found_names.end(), name);
                if (it != found_names.end()) {
                    const std::string& first =
                        found_paths[static_cast<size_t>(it - found_names.begin())];
                    debug("list: %s skipped: shadowed by %s", path.c_str(), first.c_str());
                    skipped.push_back({path, format("shadowed by %s (plugin '%s' is taken from "
                                                    "the first directory that has it)",
                                                    first.c_str(), name.c_str())});
                    continue;
                }
                debug("list: found plugin '%s' at %s", name.c_str(), path.c_str());
                found_names.push_back(name);
                found_paths.push_back(path);
            }
        }
        t_list_names.swap(found_names);
        t_list_paths.swap(found_paths);
        t_list_skipped.swap(skipped);
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

TGL_LOADER_EXPORT tgl_status tgl_plugin_list_skipped(const char** paths, const char** reasons,
                                                     size_t capacity, size_t* count) {
    if (!count) return fail(TGL_ERROR_NULL_POINTER, "tgl_plugin_list_skipped: count is NULL");
    for (size_t i = 0; i < t_list_skipped.size() && i < capacity; ++i) {
        if (paths) paths[i] = t_list_skipped[i].path.c_str();
        if (reasons) reasons[i] = t_list_skipped[i].reason.c_str();
    }
    *count = t_list_skipped.size();
    return TGL_OK;
}

TGL_LOADER_EXPORT tgl_status tgl_plugin_search_dirs(const char** dirs, size_t capacity,
                                                    size_t* count, const char** origin) {
    if (!count) return fail(TGL_ERROR_NULL_POINTER, "tgl_plugin_search_dirs: count is NULL");
    *count = 0;
    try {
        SearchPath sp = search_path();
        t_search_dirs.swap(sp.dirs);
        t_search_origin = sp.origin;
    } catch (const std::bad_alloc&) {
        return fail(TGL_ERROR_RESOURCE_EXHAUSTED, "tgl_plugin_search_dirs: out of host memory");
    }
    for (size_t i = 0; dirs && i < t_search_dirs.size() && i < capacity; ++i)
        dirs[i] = t_search_dirs[i].c_str();
    *count = t_search_dirs.size();
    if (origin) *origin = t_search_origin.c_str();
    return TGL_OK;
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
