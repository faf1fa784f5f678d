#!/usr/bin/python3
"""Generates tensorgl/_abi.py, the data behind the Python binding's ctypes layer, from the ABI's
one definition (plugin_api/tensorgl/plugin_api.h) and the plugins' op catalogue
(backends/common/op_catalogue.cpp: which params struct and which operands each op has).

Run at build time (CMake's custom command, and setup.py's build_py for `pip install ./python`):

    gen_abi.py <source root> <out/_abi.py>

It also writes the project's version (the root CMakeLists.txt's project(... VERSION x.y.z)), so
the package, pip and CMake share one version number.

Everything the header declares is written out by name: constants (#define and enum values), scalar
typedefs, every struct with its fields (the function table tgl_plugin_api included), and the
header's own layout pins (its static asserts), which tests/python checks the ctypes layouts against.
A construct the parser does not understand stops the generator with the line it failed on: the
binding is never generated from a half-read header.
"""

import hashlib
import os
import pprint
import re
import sys


class GenError(Exception):
    pass


_SCALARS = {"uint8_t", "int8_t", "uint16_t", "int16_t", "uint32_t", "int32_t", "uint64_t", "int64_t",
            "float", "double", "size_t", "void*", "const char*", "const void*", "void"}


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _eval_int(expr, constants, what):
    """Value of an integer constant expression of the header (literals with u suffixes, names of
    constants, sizeof(void*) as 8: the header pins LP64 layouts only, + * << | and parentheses)."""
    e = re.sub(r"sizeof\(\s*void\s*\*\s*\)", "8", expr)
    e = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)[uUlL]*\b", r"\1", e)
    e = re.sub(r"\b[A-Z_][A-Z0-9_]*\b", lambda m: str(constants[m.group(0)]) if m.group(0) in constants
               else m.group(0), e)
    if not re.fullmatch(r"[0-9xa-fA-F\s+*|()<>-]*", e) or not e.strip():
        raise GenError("cannot evaluate %s: %r" % (what, expr))
    return int(eval(e, {"__builtins__": {}}, {}))  # only digits and operators reach this


def parse_header(text):
    src = _strip_comments(text)
    # The binding is LP64 (sizeof(void*) is 8 above): the header's ILP32 pins (the #elif branch
    # for 4-byte pointers) are left out.
    src = re.sub(r"^#elif UINTPTR_MAX == 0xFFFFFFFFu\n.*?(?=^#endif)", "", src, flags=re.S | re.M)
    constants, typedefs, structs, pins = {}, {}, {}, []
    enum_groups = []

    # The pins are only valid under LP64: read them out of their #if block.
    for m in re.finditer(r"^\s*#\s*define\s+(TGL_[A-Z0-9_]+)\s+(.+?)\s*$", src, flags=re.M):
        name, value = m.group(1), m.group(2)
        if value.startswith('"') or "(" in name:
            continue
        if value.startswith("TGL_STRUCT_SIZE("):
            # A published params size (TGL_X_PARAMS_SIZE_V1_n): offsetof + sizeof of a field, which
            # ctypes gives at run time (tensorgl.abi.published_size); not a literal constant.
            continue
        try:
            constants[name] = _eval_int(value, constants, name)
        except GenError:
            if name not in ("TGL_STATIC_ASSERT", "TGL_DTYPE_BIT"):
                raise
    for m in re.finditer(r"\benum\s*\{(.*?)\}\s*;", src, flags=re.S):
        group, nxt = [], 0
        for item in m.group(1).split(","):
            item = item.strip()
            if not item:
                continue
            im = re.fullmatch(r"([A-Z_][A-Z0-9_]*)\s*(?:=\s*(.+))?", item, flags=re.S)
            if not im:
                raise GenError("enum item not understood: %r" % item)
            value = _eval_int(im.group(2), constants, im.group(1)) if im.group(2) else nxt
            constants[im.group(1)] = value
            group.append(im.group(1))
            nxt = value + 1
        enum_groups.append(group)
    for m in re.finditer(r"^\s*typedef\s+([a-z0-9_]+)\s+(tgl_[a-z0-9_]+)\s*;", src, flags=re.M):
        typedefs[m.group(2)] = m.group(1)
    for m in re.finditer(r"typedef\s+struct\s+(tgl_[a-z0-9_]+)\s*\{(.*?)\}\s*(tgl_[a-z0-9_]+)\s*;",
                         src, flags=re.S):
        if m.group(1) != m.group(3):
            raise GenError("struct %s is typedef'd as %s" % (m.group(1), m.group(3)))
        structs[m.group(1)] = _parse_fields(m.group(1), m.group(2), constants, typedefs, structs)
    for m in re.finditer(r"TGL_STATIC_ASSERT\(\s*(sizeof|offsetof)\((tgl_[a-z0-9_]+)(?:\s*,\s*([a-z0-9_]+))?\)"
                         r"\s*==\s*([^,]+),", src):
        kind, struct, field, expr = m.groups()
        if re.fullmatch(r"\s*TGL_[A-Z0-9_]+_SIZE_V\d+_\d+\s*", expr):
            continue  # "no tail padding" (sizeof == a published size): the literal pins cover the layout
        if struct not in structs:
            raise GenError("a pin names struct %s, which the header does not define" % struct)
        pins.append((struct, field if kind == "offsetof" else None,
                     _eval_int(expr, constants, "pin of %s" % struct)))
    if not pins or "tgl_plugin_api" not in structs:
        raise GenError("no layout pins or no tgl_plugin_api found: is this plugin_api.h?")
    return constants, enum_groups, typedefs, structs, pins


def _parse_fields(struct, body, constants, typedefs, structs):
    fields = []
    for decl in body.split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        fm = re.fullmatch(r"(.+?)\s*\(\s*\*\s*([a-z0-9_]+)\s*\)\s*\((.*)\)", decl)
        if fm:  # a function pointer member: (name, "fn", return type, [argument types])
            args = [] if fm.group(3).strip() in ("", "void") else \
                [_param_type(a, typedefs, structs, struct) for a in fm.group(3).split(",")]
            fields.append((fm.group(2), "fn", _type(fm.group(1), typedefs, structs, struct), args))
            continue
        am = re.fullmatch(r"(.+?)\s*\b([a-z0-9_]+)\s*(?:\[\s*([A-Za-z0-9_]+)\s*\])?", decl)
        if not am:
            raise GenError("field of %s not understood: %r" % (struct, decl))
        ctype = _type(am.group(1), typedefs, structs, struct)
        count = None
        if am.group(3):
            count = _eval_int(am.group(3), constants, "array size in %s" % struct)
        fields.append((am.group(2), ctype, count))
    return fields


def _type(t, typedefs, structs, where):
    t = re.sub(r"\s*\*", "*", " ".join(t.split()))
    if t in _SCALARS:
        return t
    base = t.replace("const ", "").rstrip("*")
    if base in typedefs or base in structs or base in _SCALARS:
        return t.replace("const ", "") if t != "const char*" else t
    raise GenError("type %r in %s is not a scalar, typedef or struct of the header" % (t, where))


def _param_type(arg, typedefs, structs, where):
    arg = " ".join(arg.split())
    m = re.fullmatch(r"(.+?[\s*])([a-z_][a-z0-9_]*)", arg)
    return _type(m.group(1) if m else arg, typedefs, structs, where)


# The catalogue's shorthand macros (op_catalogue.cpp): family, operand names, inputs/outputs, and
# the params struct (None: the macro's last argument names it).
_MACROS = {
    "UNARY": ("Unary", ["x", "y"], 1, "tgl_unary_params"),
    "UNARY_P": ("Unary", ["x", "y"], 1, None),
    "BINARY": ("Binary", ["a", "b", "y"], 2, "tgl_binary_params"),
    "ARITH": ("Binary", ["a", "b", "y"], 2, "tgl_binary_params"),
    "ARITH_WIDE": ("Binary", ["a", "b", "y"], 2, "tgl_binary_params"),
    "UNARY_ARITH": ("Unary", ["x", "y"], 1, None),
    "PREDICATE": ("Binary", ["a", "b", "y"], 2, "tgl_binary_params"),
    "REDUCE": ("Reduce", ["x", "y"], 1, "tgl_reduce_params"),
    "REDUCE_P": ("Reduce", ["x", "y"], 1, None),
    "LAYOUT": ("Layout", ["x", "y"], 1, None),
}


def _split_top(s):
    """Splits on commas outside (), {} and strings."""
    out, depth, cur, in_str = [], 0, "", False
    for ch in s:
        if ch == '"':
            in_str = not in_str
        if not in_str:
            if ch in "({":
                depth += 1
            elif ch in ")}":
                depth -= 1
            elif ch == "," and depth == 0:
                out.append(cur.strip())
                cur = ""
                continue
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_catalogue(text, constants, structs):
    src = _strip_comments(text)
    m = re.search(r"const\s+OpInfo\s+kOps\[\]\s*=\s*\{(.*?)\n\};", src, flags=re.S)
    if not m:
        raise GenError("kOps[] not found in the op catalogue")
    ops = {}
    for entry in _split_top(m.group(1)):
        if not entry:
            continue
        mm = re.fullmatch(r"([A-Z_]+)\((.*)\)", entry, flags=re.S)
        if mm and mm.group(1) in _MACROS:
            family, names, n_in, params = _MACROS[mm.group(1)]
            args = _split_top(mm.group(2))
            op_const, name = args[0], args[1].strip('"')
            params = params or args[-1]
            n_out, optional, min_in, min_out = 1, 0, 0, 0
        elif entry.startswith("{") and entry.endswith("}"):
            args = _split_top(entry[1:-1])
            op_const, name = args[0], args[1].strip('"')
            family = args[2].split("::")[1]
            n_in, n_out = int(args[3]), int(args[4])
            names = [s.strip().strip('"') for s in _split_top(args[5][1:-1])]
            pm = re.fullmatch(r"sizeof\((tgl_[a-z0-9_]+)\)", args[7])
            if not pm:
                raise GenError("op %s: params %r not understood" % (name, args[7]))
            params = pm.group(1)
            rest = args[8:] + ["0"] * (3 - len(args[8:]))
            optional = sum(1 << int(k) for k in re.findall(r"OPT\((\d+)\)", rest[0]))
            min_in, min_out = int(rest[1]), int(rest[2])
        else:
            raise GenError("catalogue entry not understood: %r" % entry[:80])
        if op_const not in constants:
            raise GenError("catalogue op %s is not in the header" % op_const)
        if params not in structs:
            raise GenError("op %s: params struct %s is not in the header" % (name, params))
        if len(names) != n_in + n_out:
            raise GenError("op %s: %d operand names for %d + %d operands" % (name, len(names), n_in, n_out))
        ops[name] = {
            "id": constants[op_const], "family": family, "params": params,
            "inputs": names[:n_in], "outputs": names[n_in:],
            "optional": [names[k] for k in range(n_in + n_out) if optional >> k & 1],
            "min_inputs": min_in or n_in, "min_outputs": min_out or n_out,
        }
    return ops


SOURCES = ("plugin_api/tensorgl/plugin_api.h", "plugin_api/tensorgl/ops.h", "backends/common/op_catalogue.cpp",
           "CMakeLists.txt")
OPS_INCLUDE = '#include "ops.h"'


def read_header(root):
    """plugin_api.h with the op catalogue header (ops.h) put where plugin_api.h includes it: the
    text a C compiler sees, in its order."""
    with open(os.path.join(root, SOURCES[0]), encoding="utf-8") as f:
        header = f.read()
    with open(os.path.join(root, SOURCES[1]), encoding="utf-8") as f:
        ops = f.read()
    lines = header.split("\n")
    at = [i for i, line in enumerate(lines) if line.startswith(OPS_INCLUDE)]
    if len(at) != 1:
        raise GenError("plugin_api.h must include ops.h exactly once (found %d)" % len(at))
    lines[at[0]] = ops
    return "\n".join(lines)


def project_version(root):
    with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(\s*tensorgl\s+VERSION\s+([0-9.]+)", f.read())
    if not m:
        raise GenError("no project(tensorgl VERSION x.y.z) in %s/CMakeLists.txt" % root)
    return m.group(1)


def generate(root):
    header = read_header(root)
    with open(os.path.join(root, SOURCES[2]), encoding="utf-8") as f:
        catalogue = f.read()
    constants, enum_groups, typedefs, structs, pins = parse_header(header)
    ops = parse_catalogue(catalogue, constants, structs)
    header_ops = {v for k, v in constants.items() if k.startswith("TGL_OP_") and k not in ("TGL_OP_INVALID", "TGL_OP_ID_LIMIT")}
    missing = header_ops - {o["id"] for o in ops.values()}
    if missing:
        raise GenError("op ids of the header missing from the catalogue: %s" % sorted(missing))
    parts = [
        '"""GENERATED by python/gen_abi.py from plugin_api.h and op_catalogue.cpp: do not edit."""\n',
        "VERSION = %r\n" % project_version(root),
        "HEADER_SHA256 = %r\n" % hashlib.sha256(header.encode()).hexdigest(),
        "CONSTANTS = %s\n" % pprint.pformat(constants, width=100, sort_dicts=False),
        "ENUM_GROUPS = %s\n" % pprint.pformat(enum_groups, width=100, compact=True),
        "TYPEDEFS = %s\n" % pprint.pformat(typedefs, width=100, sort_dicts=False),
        "STRUCTS = %s\n" % pprint.pformat(structs, width=100, sort_dicts=False),
        "PINS = %s\n" % pprint.pformat(pins, width=100, compact=True),
        "OPS = %s\n" % pprint.pformat(ops, width=100, sort_dicts=False),
    ]
    return "\n".join(parts)


def main(argv):
    if len(argv) != 3:
        print("usage: gen_abi.py <source root> <out/_abi.py>", file=sys.stderr)
        return 2
    try:
        write(argv[1], argv[2])
    except (GenError, OSError) as e:
        print("gen_abi.py: %s" % e, file=sys.stderr)
        return 1
    return 0


def write(root, out):
    text = generate(root)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, out)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
