"""libtensorgl (the loader) and its plugins, through ctypes; TensorGLError.

Where libtensorgl is found (the first that exists wins):
  1. the path given to Library(path);
  2. $TENSORGL_LIB (the path of libtensorgl.so: a build tree's <build>/lib/libtensorgl.so, or any
     install's); the loader then finds the plugins next to it (build tree) or in <libdir>/tensorgl;
  3. the library of the install this package belongs to (`cmake --install` writes its location into
     tensorgl/_install.py, relative to the package);
  4. the dynamic linker's search for libtensorgl.so.1 (ldconfig's cache, LD_LIBRARY_PATH, /usr/lib, ...).
"""

import ctypes
import ctypes.util
import os
import threading

from . import abi

_HERE = os.path.dirname(os.path.abspath(__file__))


class TensorGLError(RuntimeError):
    """A tensorgl call failed. Attributes: status (int), status_name ("TGL_ERROR_SHAPE_MISMATCH"),
    message (the plugin's or the loader's own words), op (the op's ABI name, or None) and
    function (the C function that failed, e.g. "run_op" or "tgl_plugin_load")."""

    def __init__(self, status, message, function, op=None):
        self.status = int(status)
        self.status_name = abi.status_name(status)
        self.message = message
        self.function = function
        self.op = op
        where = "%s(%s)" % (function, op) if op else function
        super().__init__("%s failed: %s: %s" % (where, self.status_name, message))


def _decode(b):
    return b.decode("utf-8", "replace") if b is not None else None


def _candidates(path):
    if path:
        return [("the path given", os.fspath(path))]
    found = []
    env = os.environ.get("TENSORGL_LIB")
    if env:
        return [("$TENSORGL_LIB", env)]
    try:
        from . import _install  # written by `cmake --install`
        found.append(("this package's install", os.path.normpath(os.path.join(_HERE, _install.LIBRARY))))
    except ImportError:
        pass
    found.append(("the dynamic linker's search", "libtensorgl.so.1"))
    system = ctypes.util.find_library("tensorgl")
    if system and system != "libtensorgl.so.1":
        found.append(("ldconfig", system))
    return found


_LOADER_FUNCTIONS = {
    # name: (restype, argtypes), as loader/include/tensorgl/loader.h declares them
    "tgl_plugin_load": (ctypes.c_int32, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    "tgl_plugin_release": (None, [ctypes.c_void_p]),
    "tgl_plugin_get_api": (ctypes.POINTER(abi.tgl_plugin_api), [ctypes.c_void_p]),
    "tgl_plugin_abi_minor": (ctypes.c_uint32, [ctypes.c_void_p]),
    "tgl_plugin_path": (ctypes.c_char_p, [ctypes.c_void_p]),
    "tgl_plugin_name": (ctypes.c_char_p, [ctypes.c_void_p]),
    "tgl_loader_last_error": (ctypes.c_char_p, []),
    "tgl_plugin_list": (ctypes.c_int32, [ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p),
                                         ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]),
    "tgl_device_property": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p]),
}


class Library:
    """libtensorgl, loaded with ctypes (see the module's docstring for where it is looked for)."""

    def __init__(self, path=None):
        tried = []
        for what, candidate in _candidates(path):
            try:
                self._lib = ctypes.CDLL(candidate)
                self.path = candidate
                break
            except OSError as e:
                tried.append("%s: %s (%s)" % (what, candidate, e))
        else:
            raise OSError("libtensorgl not found; tried %s. Set TENSORGL_LIB to the path of "
                          "libtensorgl.so (e.g. <build>/lib/libtensorgl.so or <prefix>/lib/libtensorgl.so)"
                          % "; ".join(tried))
        for name, (restype, argtypes) in _LOADER_FUNCTIONS.items():
            fn = getattr(self._lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        self._plugins = {}
        self._lock = threading.Lock()

    def check(self, status, function):
        if status != abi.TGL_OK:
            raise TensorGLError(status, _decode(self._lib.tgl_loader_last_error()) or "", function)

    def load_plugin(self, name_or_path):
        """The plugin of that name ("gles", "cpu") or file; loaded once per Library."""
        key = os.fspath(name_or_path)
        with self._lock:
            plugin = self._plugins.get(key)
            if plugin is None or plugin._handle is None:
                handle = ctypes.c_void_p()
                self.check(self._lib.tgl_plugin_load(os.fsencode(key), ctypes.byref(handle)),
                           "tgl_plugin_load(%r)" % key)
                plugin = self._plugins[key] = Plugin(self, handle)
            return plugin

    def list_plugins(self):
        """[(name, path)] of the plugin files on the loader's search path, in search order."""
        count = ctypes.c_size_t()
        self.check(self._lib.tgl_plugin_list(None, None, 0, ctypes.byref(count)), "tgl_plugin_list")
        n = count.value
        if n == 0:
            return []
        names, paths = (ctypes.c_char_p * n)(), (ctypes.c_char_p * n)()
        self.check(self._lib.tgl_plugin_list(names, paths, n, ctypes.byref(count)), "tgl_plugin_list")
        return [(_decode(names[i]), _decode(paths[i])) for i in range(min(n, count.value))]


def made_on_first_use(factory):
    """A function that returns factory()'s one instance, made by the first caller of any thread."""
    lock, made = threading.Lock(), []

    def get():
        with lock:
            if not made:
                made.append(factory())
            return made[0]
    return get


# The process's Library (found as the module's docstring says), made on first use.
default_library = made_on_first_use(Library)


class Plugin:
    """A loaded plugin: its function table (api, a ctypes tgl_plugin_api) and queries."""

    def __init__(self, library, handle):
        self.library = library
        self._handle = handle
        api_ptr = library._lib.tgl_plugin_get_api(handle)
        if not api_ptr:
            raise TensorGLError(abi.TGL_ERROR_INTERNAL, "the loader returned no function table",
                                "tgl_plugin_get_api")
        self.api = api_ptr.contents
        self.path = _decode(library._lib.tgl_plugin_path(handle))
        self.name = _decode(library._lib.tgl_plugin_name(handle))
        self.abi_minor = library._lib.tgl_plugin_abi_minor(handle)

    def __repr__(self):
        return "<tensorgl.Plugin %r from %s>" % (self.name, self.path)

    def release(self):
        """Drops this host's reference to the plugin (the library stays mapped; see loader.h)."""
        if self._handle:
            self.library._lib.tgl_plugin_release(self._handle)
            self._handle = None

    def last_error_message(self):
        return _decode(self.api.last_error_message()) or ""

    def check(self, status, function, op=None):
        """Raises TensorGLError with the plugin's message unless status is TGL_OK."""
        if status != abi.TGL_OK:
            raise TensorGLError(status, self.last_error_message(), function, op)

    def info(self):
        """tgl_plugin_info as a dict: name, version, description, abi_major/minor, negotiated_minor."""
        pi = abi.tgl_plugin_info()
        pi.struct_size = ctypes.sizeof(pi)
        self.check(self.api.get_plugin_info(ctypes.byref(pi)), "get_plugin_info")
        return {"name": _decode(pi.name), "version": _decode(pi.version),
                "description": _decode(pi.description), "abi_major": pi.abi_major,
                "abi_minor": pi.abi_minor, "negotiated_minor": pi.negotiated_minor}

    def device_count(self):
        n = ctypes.c_uint32()
        self.check(self.api.device_count(ctypes.byref(n)), "device_count")
        return n.value

    def device_properties(self, index=0):
        """{name: value} of device `index`'s properties, in the plugin's order."""
        props = ctypes.POINTER(abi.tgl_property)()
        n = ctypes.c_uint32()
        self.check(self.api.device_properties(index, ctypes.byref(props), ctypes.byref(n)),
                   "device_properties(%d)" % index)
        return {_decode(props[i].name): _decode(props[i].value) for i in range(n.value)}

    def query_op(self, op):
        """tgl_op_caps of an op (id or ABI name) as a dict."""
        op_id = abi.OPS[op]["id"] if isinstance(op, str) else int(op)
        caps = abi.tgl_op_caps()
        caps.struct_size = ctypes.sizeof(caps)
        self.check(self.api.query_op(op_id, ctypes.byref(caps)), "query_op(%d)" % op_id)
        return {"op": caps.op, "name": _decode(caps.name), "supported": bool(caps.supported),
                "n_inputs": caps.n_inputs, "n_outputs": caps.n_outputs, "max_rank": caps.max_rank,
                "flags": caps.flags, "params_size": caps.params_size,
                "input_dtypes": list(caps.input_dtypes)[:caps.n_inputs],
                "output_dtypes": list(caps.output_dtypes)[:caps.n_outputs]}

    def open_device(self, index=0):
        """Device `index` of this plugin (a tensorgl.Device; close it, or use it in `with`)."""
        from ._tensor import Device
        return Device(self, index)
