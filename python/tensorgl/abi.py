"""The C ABI of plugin_api.h as ctypes, built from the generated tensorgl._abi (python/gen_abi.py
reads the header and the op catalogue at build time, so nothing here is written by hand).

Names are the header's: every constant (TGL_OP_SOFTMAX, TGL_ERROR_SHAPE_MISMATCH, TGL_DTYPE_F16,
TGL_PAD_REFLECT, ...) and every struct (tgl_softmax_params, tgl_tensor, tgl_plugin_api, ...) is an
attribute of this module. OPS maps each op's ABI name to its id, family, operand names and params
struct; PINS lists the header's layout pins (static asserts), which tests/python checks.
"""

import ctypes

from . import _abi

CONSTANTS = dict(_abi.CONSTANTS)
OPS = _abi.OPS
PINS = _abi.PINS
HEADER_SHA256 = _abi.HEADER_SHA256
globals().update(CONSTANTS)

_BASE = {
    "uint8_t": ctypes.c_uint8, "int8_t": ctypes.c_int8, "uint16_t": ctypes.c_uint16,
    "int16_t": ctypes.c_int16, "uint32_t": ctypes.c_uint32, "int32_t": ctypes.c_int32,
    "uint64_t": ctypes.c_uint64, "int64_t": ctypes.c_int64, "float": ctypes.c_float,
    "double": ctypes.c_double, "size_t": ctypes.c_size_t, "const char*": ctypes.c_char_p,
    "void*": ctypes.c_void_p, "const void*": ctypes.c_void_p, "void": None,
}
STRUCTS = {}


def ctype(name):
    """The ctypes type of a C type name of the header ("tgl_status", "uint64_t*", "tgl_tensor")."""
    stars = len(name) - len(name.rstrip("*"))
    if name in _BASE:
        return _BASE[name]
    base = name.rstrip("*")
    if base in ("void", "const void"):
        t, stars = ctypes.c_void_p, stars - 1
    elif base in _BASE:
        t = _BASE[base]
    elif base in _abi.TYPEDEFS:
        t = ctype(_abi.TYPEDEFS[base])
    else:
        t = STRUCTS[base]
    for _ in range(stars):
        t = ctypes.POINTER(t)
    return t


def _build_structs():
    for sname, fields in _abi.STRUCTS.items():
        cfields = []
        for field in fields:
            if field[1] == "fn":
                _, _, ret, args = field
                cfields.append((field[0], ctypes.CFUNCTYPE(ctype(ret), *[ctype(a) for a in args])))
            else:
                name, t, count = field
                cfields.append((name, ctype(t) * count if count else ctype(t)))
        STRUCTS[sname] = type(sname, (ctypes.Structure,), {"_fields_": cfields, "__doc__": sname})


_build_structs()
globals().update(STRUCTS)


def layout_mismatches():
    """The header's layout pins the ctypes structs disagree with: [(what, ctypes value, pin)]."""
    bad = []
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        return bad  # the header pins LP64 layouts only
    for struct, field, expected in PINS:
        cls = STRUCTS[struct]
        if field is None:
            got, what = ctypes.sizeof(cls), "sizeof(%s)" % struct
        else:
            got, what = getattr(cls, field).offset, "offsetof(%s, %s)" % (struct, field)
        if got != expected:
            bad.append((what, got, expected))
    return bad


_bad = layout_mismatches()
if _bad:
    raise ImportError("tensorgl's ctypes layouts do not match plugin_api.h's pins: " +
                      "; ".join("%s is %d, the header pins %d" % b for b in _bad))

STATUS_NAMES = {v: k for k, v in CONSTANTS.items()
                if k == "TGL_OK" or k.startswith("TGL_ERROR_")}
OP_NAMES = {info["id"]: name for name, info in OPS.items()}
DTYPE_NAMES = {v: k[len("TGL_DTYPE_"):].lower() for k, v in CONSTANTS.items()
               if k.startswith("TGL_DTYPE_") and "_COUNT" not in k}  # not TGL_DTYPE_COUNT_V1_n


def status_name(status):
    """Name of a status code, e.g. "TGL_ERROR_SHAPE_MISMATCH" (as tgl_status_name())."""
    return STATUS_NAMES.get(int(status), "TGL_ERROR_(unknown status)")


def params_class(op_name):
    """The ctypes params struct of an op (by ABI name)."""
    return STRUCTS[OPS[op_name]["params"]]


def camel(struct_name):
    """tgl_softmax_params -> SoftmaxParams (the short names the package also exports)."""
    return "".join(p.capitalize() for p in struct_name[len("tgl_"):].split("_"))
