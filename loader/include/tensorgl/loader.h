/*
 * libtensorgl: finds tensorgl plugins, loads them with dlopen, verifies them and hands out their
 * function tables (see tensorgl/plugin_api.h for the ABI itself).
 *
 * Search order for a plugin given by name (e.g. "gles" -> libtensorgl-gles.so):
 *   1. TGL_PLUGIN_PATH: colon-separated directories; when set (and not empty), it replaces the
 *      defaults below. Empty elements are ignored; relative elements are skipped;
 *   2. the directory that holds libtensorgl itself (where plugins sit in a build tree), then its
 *      subdirectory tensorgl/ (where they sit in an installed tree, even one moved to another
 *      prefix after it was built);
 *   3. the install directory of plugins (<prefix>/<libdir>/tensorgl, fixed at build time).
 * The first file of that name that exists is the one loaded: if it fails a check, the load fails
 * (a broken plugin is reported, never silently replaced by another copy further down the path).
 * The current working directory is never searched. A name containing '/' is a path and is loaded
 * as given. TGL_LOADER_DEBUG=1 prints every candidate and why it was taken or skipped, and every
 * rejection (stderr). Environment variables are read with secure_getenv, on every call.
 *
 * Before a plugin is trusted (each failure has its own status, TGL_ERROR_PLUGIN_*, and a message
 * naming the file and the reason):
 *  - Who may change it. "Trusted" users are root and the process's effective user (a process
 *    running as root trusts root only). The path is resolved one component at a time, as given
 *    and through the target of every symlink on it. Every directory a name is looked up in must
 *    be owned by a trusted user and, unless it is sticky (like /tmp: then only an entry's owner
 *    may replace the entry), writable by nobody else: neither by others nor by its group, except
 *    when that group is root's or the process's effective group (a user private group, which
 *    umask 002 makes group-writable). Every symlink followed must be owned by a trusted user. The file must be a regular file owned by a trusted user, not writable by
 *    others or by another group. (So a world-writable directory holding a symlinked directory is
 *    refused, and so is a plugin in another user's tree.) TGL_ERROR_PLUGIN_INSECURE.
 *  - The file is opened once (O_NOFOLLOW, O_NONBLOCK: a FIFO never blocks the load), checked by
 *    fstat, and everything after reads that descriptor: the library is mapped with
 *    dlopen("/proc/self/fd/N"), so the file checked is the file loaded (/proc must be mounted).
 *    The descriptor stays open (O_CLOEXEC) for the life of the process, one per library mapped:
 *    glibc knows the library by that name, so dladdr and dl_iterate_phdr report it as
 *    /proc/self/fd/N (realpath of that name gives the file; an in-process symbolizer, as gcc's
 *    sanitizers use, finds it, an external one such as llvm-symbolizer does not, and prints the
 *    frame as /proc/self/fd/N+offset with the BuildId). For the same reason $ORIGIN in a
 *    plugin's own RUNPATH means /proc/self/fd: a plugin must not find its dependencies through
 *    $ORIGIN (dlopen then fails, TGL_ERROR_PLUGIN_NOT_LOADABLE).
 *  - It is an ELF shared object of this process's class, byte order and machine, whose program
 *    headers and every segment's file bytes lie inside the file (a truncated file is refused
 *    here: mapping it would kill the process with SIGBUS). TGL_ERROR_PLUGIN_NOT_LOADABLE, as is a
 *    failing dlopen(RTLD_NOW | RTLD_LOCAL).
 *  - tgl_plugin_init_v1 exists and is a function (ELF symbol type STT_FUNC or STT_GNU_IFUNC; a
 *    data object of that name is never called): TGL_ERROR_PLUGIN_NO_ENTRY.
 *  - It returns TGL_OK with a table that lies inside the plugin's own memory (its static table:
 *    a pointer elsewhere is never read), aligned, of ABI major 1, at least the v1.0 size, with
 *    every function of the minors it claims set; get_plugin_info gives a name that no plugin
 *    loaded from another file already has. When init fails, the plugin's own message is read
 *    only from a table that passes those checks, through a last_error_message that is code of
 *    the plugin; otherwise the message has the status alone.
 *
 * Plugin code (constructors, the entry point, get_plugin_info) never runs under the loader's
 * lock: a plugin's init may itself call tgl_plugin_load (a wrapper loading the plugin it wraps).
 * While one thread loads a file, other threads loading the same file wait for it and get the
 * same result's handle; a plugin that asks for itself from its own initialisation (on the thread
 * loading it), or a circle of threads each waiting for a plugin the next one is loading, gets
 * TGL_ERROR_PLUGIN_INIT_FAILED for that nested load, never a deadlock.
 *
 * Lifetime: a library the loader has mapped is never unloaded: its constructors have run (they may
 * have started threads that run its code), even when it is then refused (the message says so).
 * tgl_plugin_release only drops the host's reference (devices left open stay open and
 * usable, with their threads, until device_close), and a tgl_plugin pointer stays valid for the
 * life of the process. The plugins of this project are also linked with -z nodelete, so a host
 * that dlcloses one itself cannot unmap it either. Their threads end with their devices
 * (device_close joins them); at process exit the GLES plugin finishes and joins the GL threads of
 * devices still open before the driver's exit handlers run. Loading the same file twice (same
 * device and inode, e.g. through a symlink) returns the same tgl_plugin.
 * All functions are thread-safe. Error messages are per calling thread.
 */
#ifndef TENSORGL_LOADER_H
#define TENSORGL_LOADER_H

#include <tensorgl/plugin_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tgl_plugin tgl_plugin;

/* Loads a plugin by name ("gles", "cpu") or by path (anything containing '/'). On success sets
 * *out (one reference); on failure sets *out to NULL and returns a TGL_ERROR_PLUGIN_* status
 * (TGL_ERROR_NULL_POINTER / TGL_ERROR_INVALID_ARGUMENT for bad arguments; a name is letters,
 * digits, '_', '-' or '.', not starting with '.'), with the reason in tgl_loader_last_error(). */
tgl_status tgl_plugin_load(const char* name_or_path, tgl_plugin** out);

/* Drops a reference obtained from tgl_plugin_load (the library stays mapped). NULL is ignored. */
void tgl_plugin_release(tgl_plugin* plugin);

/* The plugin's verified function table (NULL for a NULL plugin), as the host sees it: a copy
 * (struct_size = the bytes copied, abi_major/abi_minor the plugin's own) whose members newer
 * than the negotiated minor are NULL (e.g. timer_begin/timer_end of ABI 1.1 for a 1.0 plugin). */
const tgl_plugin_api* tgl_plugin_get_api(const tgl_plugin* plugin);

/* The negotiated ABI minor: min(loader's TGL_ABI_MINOR, plugin's minor). */
uint32_t tgl_plugin_abi_minor(const tgl_plugin* plugin);

/* Absolute path of the loaded file (symlinks resolved), and the plugin's own short name ("gles",
 * "cpu") from get_plugin_info. NULL for a NULL plugin. */
const char* tgl_plugin_path(const tgl_plugin* plugin);
const char* tgl_plugin_name(const tgl_plugin* plugin);

/* Message of the most recent failing loader call on this thread ("" if none). A successful call
 * does not clear it. Valid until the next failing loader call on this thread. */
const char* tgl_loader_last_error(void);

/* Plugin files found on the search path (files named libtensorgl-<name>.so), in search order,
 * without loading them. Fills up to `capacity` entries of names/paths (strings owned by the
 * loader, valid until the next call of this function on this thread) and sets *count to the
 * number found (which may exceed capacity). A name found in several directories is listed once,
 * with the file that loading by name would take. names and paths may each be NULL (then that
 * array is not filled); count must not be NULL. */
tgl_status tgl_plugin_list(const char** names, const char** paths, size_t capacity, size_t* count);

/* Since libtensorgl 1.1: what the most recent tgl_plugin_list call on this thread passed over,
 * in search order, each with the reason: a TGL_PLUGIN_PATH element that is relative, a search
 * directory that cannot be read (e.g. it does not exist), a libtensorgl-<name>.so whose <name> is
 * not a plugin name or that is not a regular file, and a plugin shadowed by a file of the same
 * name earlier on the path. Fills up to `capacity` entries of paths/reasons (strings owned by the
 * loader, valid until the next tgl_plugin_list call on this thread) and sets *count to the number
 * of entries (0 before any tgl_plugin_list call). paths and reasons may each be NULL; count must
 * not be NULL. A file that tgl_plugin_list did find may still fail to load: tgl_plugin_load says
 * why. */
tgl_status tgl_plugin_list_skipped(const char** paths, const char** reasons, size_t capacity,
                                   size_t* count);

/* Since libtensorgl 1.1: the directories searched for a plugin given by name, in search order, as
 * the environment makes them now (see the search order above). Fills up to `capacity` entries of
 * dirs (may be NULL) and sets *count to the number of directories; *origin (origin may be NULL)
 * is set to "TGL_PLUGIN_PATH" when that variable gave the path, else to "defaults". The strings
 * are owned by the loader, valid until the next call of this function on this thread. */
tgl_status tgl_plugin_search_dirs(const char** dirs, size_t capacity, size_t* count,
                                  const char** origin);

/* Convenience for hosts: the value of a named device property, or NULL if the plugin does not
 * report it (or index is not a device). When the plugin's device_properties call fails, its
 * status and message are recorded for tgl_loader_last_error(). */
const char* tgl_device_property(const tgl_plugin* plugin, uint32_t device_index, const char* name);

#ifdef __cplusplus
}
#endif

#endif /* TENSORGL_LOADER_H */
