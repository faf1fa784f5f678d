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
 * Before a plugin is trusted: the file exists and is a regular file that is not world-writable,
 * in a directory that is not world-writable (unless sticky, like /tmp), under parent directories
 * none of which is world-writable unless sticky (the same for a symlink's own directory and its
 * parents); it is an ELF shared
 * object of this process's class and machine; dlopen(RTLD_NOW | RTLD_LOCAL) succeeds;
 * tgl_plugin_init_v1 exists and returns TGL_OK with a table; the table's ABI major is 1, it is at
 * least the v1.0 size and every v1.0 function is set; get_plugin_info gives a name that no plugin
 * loaded from another file already has. Each failure has its own status (TGL_ERROR_PLUGIN_*) and
 * a message naming the file and the reason.
 *
 * Lifetime: a plugin is never unloaded while it may still run threads. Loaded plugins are never
 * dlclose'd; tgl_plugin_release only drops the host's reference (devices left open stay open and
 * usable, with their threads, until device_close), and a tgl_plugin pointer stays valid for the
 * life of the process. The plugins of this project are also linked with -z nodelete, so a host
 * that dlcloses one itself cannot unmap it either. Their threads end with their devices
 * (device_close joins them); at process exit the GLES plugin finishes and joins the GL threads of
 * devices still open before the driver's exit handlers run. Loading the same file twice (same
 * device and inode, e.g. through a symlink) returns the same tgl_plugin. Only a library rejected
 * before its entry point ran is dlclose'd again.
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

/* Convenience for hosts: the value of a named device property, or NULL if the plugin does not
 * report it (or index is not a device). When the plugin's device_properties call fails, its
 * status and message are recorded for tgl_loader_last_error(). */
const char* tgl_device_property(const tgl_plugin* plugin, uint32_t device_index, const char* name);

#ifdef __cplusplus
}
#endif

#endif /* TENSORGL_LOADER_H */
