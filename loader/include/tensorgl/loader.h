/*
 * libtensorgl: finds tensorgl plugins, loads them with dlopen, verifies them and hands out their
 * function tables (see tensorgl/plugin_api.h for the ABI itself).
 *
 * Search order for a plugin given by name (e.g. "gles" -> libtensorgl-gles.so):
 *   1. TGL_PLUGIN_PATH: colon-separated directories; when set, it replaces the defaults below;
 *   2. the directory that holds libtensorgl itself;
 *   3. the install directory of plugins (<prefix>/<libdir>/tensorgl).
 * The current working directory is never searched. A name containing '/' is a path and is loaded
 * as given. TGL_LOADER_DEBUG=1 prints every candidate and why it was taken or skipped (stderr).
 *
 * Before a plugin is trusted: the file exists and is a regular file that is not world-writable;
 * dlopen(RTLD_NOW | RTLD_LOCAL) succeeds; tgl_plugin_init_v1 exists and returns TGL_OK with a
 * table; the table is at least the v1.0 size, its ABI major is 1 and every v1.0 function is set.
 * Each failure has its own status (TGL_ERROR_PLUGIN_*) and a message naming the file and reason.
 *
 * Loaded plugins are never dlclose'd (a plugin may own threads); tgl_plugin_release only drops
 * the host's reference. Loading the same file twice returns the same tgl_plugin.
 * All functions are thread-safe. Error messages are per calling thread.
 */
#ifndef TENSORGL_LOADER_H
#define TENSORGL_LOADER_H

#include <tensorgl/plugin_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tgl_plugin tgl_plugin;

/* Loads a plugin by name ("gles", "cpu") or by path (anything containing '/'). */
tgl_status tgl_plugin_load(const char* name_or_path, tgl_plugin** out);

/* Drops a reference obtained from tgl_plugin_load (the library stays mapped). NULL is ignored. */
void tgl_plugin_release(tgl_plugin* plugin);

/* The plugin's verified function table. */
const tgl_plugin_api* tgl_plugin_get_api(const tgl_plugin* plugin);

/* The negotiated ABI minor: min(loader's TGL_ABI_MINOR, plugin's minor). */
uint32_t tgl_plugin_abi_minor(const tgl_plugin* plugin);

/* Absolute path of the loaded file, and the plugin's own short name ("gles", "cpu"). */
const char* tgl_plugin_path(const tgl_plugin* plugin);
const char* tgl_plugin_name(const tgl_plugin* plugin);

/* Message of the most recent failing loader call on this thread ("" if none). */
const char* tgl_loader_last_error(void);

/* Plugin files found on the search path (files named libtensorgl-<name>.so), in search order,
 * without loading them. Fills up to `capacity` entries of names/paths (strings owned by the
 * loader, valid until the next call of this function on this thread) and sets *count to the
 * number found. names/paths may be NULL when capacity is 0. */
tgl_status tgl_plugin_list(const char** names, const char** paths, size_t capacity, size_t* count);

/* Convenience for hosts: the value of a named device property, or NULL if the plugin does not
 * report it (or index is not a device). */
const char* tgl_device_property(const tgl_plugin* plugin, uint32_t device_index, const char* name);

#ifdef __cplusplus
}
#endif

#endif /* TENSORGL_LOADER_H */
