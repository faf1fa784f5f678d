"""tensorgl-info: command line, text and JSON reports, and its failures (ctest: tensorgl_info).

Environment (set by tests/info/CMakeLists.txt): TENSORGL_INFO (the binary), TGL_TEST_PLUGIN_DIR
(where the build's plugins are), TGL_EXPECTED_VERSION (the project's version).
"""
import glob
import json
import os
import shutil
import subprocess

import pytest

INFO = os.environ["TENSORGL_INFO"]
PLUGIN_DIR = os.environ["TGL_TEST_PLUGIN_DIR"]
# The plugins built: every plugin file in the build's library directory, in the loader's order.
PLUGINS = sorted(os.path.basename(f)[len("libtensorgl-"):-len(".so")]
                 for f in glob.glob(os.path.join(PLUGIN_DIR, "libtensorgl-*.so")))
assert "cpu" in PLUGINS, f"no CPU plugin in {PLUGIN_DIR}"


def run(*args, plugin_path=PLUGIN_DIR, env_extra=None):
    env = dict(os.environ)
    env.pop("TGL_DEVICE", None)
    env["TGL_PLUGIN_PATH"] = plugin_path
    env.update(env_extra or {})
    return subprocess.run([INFO, *args], capture_output=True, text=True, env=env, timeout=120)


def run_json(*args, **kw):
    r = run("--json", *args, **kw)
    try:
        return r, json.loads(r.stdout)
    except json.JSONDecodeError as e:
        pytest.fail(f"tensorgl-info --json printed invalid JSON ({e}); rc={r.returncode}\n{r.stdout[:2000]}\n{r.stderr}")


def test_help_lists_every_option():
    r = run("--help")
    assert r.returncode == 0, r.stderr
    for opt in ("--plugin=NAME|PATH", "--device=N", "--json", "--no-ops", "--ops-markdown", "--help", "--version"):
        assert opt in r.stdout, f"--help does not mention {opt}:\n{r.stdout}"
    assert "Exit status" in r.stdout
    assert run("-h").stdout == r.stdout


def test_version():
    r = run("--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"tensorgl-info {os.environ['TGL_EXPECTED_VERSION']} (plugin ABI 1."), r.stdout


@pytest.mark.parametrize("args, named", [
    (["--bogus"], "--bogus"),
    (["--device=abc"], "--device: expected a device index (a decimal number from 0), got 'abc'"),
    (["--device", "-1"], "got '-1'"),
    (["--device"], "option '--device' requires an argument"),
    (["--plugin="], "--plugin: expected a plugin name or path, got an empty value"),
    (["cpu"], "unexpected argument 'cpu'"),
    (["--ops-markdown", "--json"], "--ops-markdown prints the op table alone"),
])
def test_bad_command_line_names_the_option(args, named):
    r = run(*args)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert named in r.stderr, r.stderr
    assert "--help" in r.stderr and r.stdout == ""


def test_json_lists_every_plugin_with_devices_and_ops():
    r, doc = run_json()
    assert r.returncode == 0, r.stderr
    assert doc["error"] is None and doc["usable_devices"] >= len(PLUGINS)
    assert doc["search_path"] == {"origin": "TGL_PLUGIN_PATH", "dirs": [PLUGIN_DIR]}
    plugins = {p["name"]: p for p in doc["plugins"]}
    assert sorted(plugins) == sorted(PLUGINS)
    for name, p in plugins.items():
        assert os.path.dirname(p["path"]) == os.path.realpath(PLUGIN_DIR)
        assert p["abi"].startswith("1.") and p["version"]
        assert p["device_count"] >= 1 and p["no_device"] is None
        dev = p["devices"][0]
        assert dev["usable"] and dev["error"] is None, dev
        assert dev["properties"]["renderer"] and int(dev["properties"]["limit.max_rank"]) >= 1
        ops = {op["name"]: op for op in p["ops"]}
        assert ops["matmul"]["supported"] and ["f32", "f16", "bf16"] in [sorted(m, reverse=True) for m in ops["matmul"]["inputs"]]
        assert ops["relu"]["id"] == 102 and ops["relu"]["max_rank"] >= 4
    if "gles" in plugins:  # what a GL driver has and the CPU plugin has not
        props = plugins["gles"]["devices"][0]["properties"]
        for key in ("shading.version", "egl.platform", "api.version", "extensions"):
            assert props.get(key), f"gles device lacks {key}"
        assert "OpenGL ES" in props["api.version"]
    if "cpu" in plugins:
        assert set(plugins["cpu"]["devices"][0]["not_reported"]) >= {"shading.version", "egl.platform"}
    # The same document through the standard tool the brief names.
    tool = subprocess.run(["/usr/bin/python3", "-m", "json.tool"], input=r.stdout, capture_output=True, text=True)
    assert tool.returncode == 0, tool.stderr


# GL_KHR_shader_subgroup's properties agree with the extension list: the kernels use subgroups
# (subgroup.kernels = the size) exactly where the context has the extension in compute shaders with
# the basic and shuffle features, and never under TGL_GLES_LIMITS=minimum or TGL_TUNE_SUBGROUPS=0
# (llvmpipe has no such extension: 0 everywhere; an NVIDIA GPU reports 32 by default).
@pytest.mark.parametrize("env", [{}, {"TGL_TUNE_SUBGROUPS": "0"}, {"TGL_TUNE_SUBGROUPS": "1"}, {"TGL_GLES_LIMITS": "minimum"}])
def test_subgroup_properties_follow_the_extension_and_the_switches(env):
    if "gles" not in PLUGINS:
        pytest.skip("no GLES plugin built")
    r, doc = run_json("--plugin=gles", "--no-ops", env_extra=env)
    assert r.returncode == 0, r.stderr
    props = doc["plugins"][0]["devices"][0]["properties"]
    has_ext = "GL_KHR_shader_subgroup" in props["extensions"].split()
    assert props["extensions.subgroup"] == ("1" if has_ext else "0")
    size, features = int(props["subgroup.size"]), props["subgroup.features"].split()
    if not has_ext:
        assert size == 0 and features == [] and props["subgroup.compute"] == "0"
    usable = has_ext and props["subgroup.compute"] == "1" and {"basic", "shuffle"} <= set(features) and size in (4, 8, 16, 32, 64, 128)
    switched_off = env.get("TGL_TUNE_SUBGROUPS") == "0" or env.get("TGL_GLES_LIMITS") == "minimum"
    assert int(props["subgroup.kernels"]) == (size if usable and not switched_off else 0), props
    if env.get("TGL_GLES_LIMITS") == "minimum":
        assert not has_ext and size == 0


def test_malformed_subgroup_switch_fails_the_device_open():
    if "gles" not in PLUGINS:
        pytest.skip("no GLES plugin built")
    r, doc = run_json("--plugin=gles", "--no-ops", env_extra={"TGL_TUNE_SUBGROUPS": "yes"})
    dev = doc["plugins"][0]["devices"][0]
    assert not dev["usable"] and "TGL_TUNE_SUBGROUPS=yes" in (dev["error"] or ""), dev
    assert dev["properties"]["subgroup.kernels"] == "0"


@pytest.mark.parametrize("form", [["--plugin=cpu"], ["--plugin", "cpu"], ["-p", "cpu"], ["-pcpu"]])
def test_plugin_filter_in_every_option_form(form):
    r, doc = run_json(*form, "--device", "0", "--no-ops")
    assert r.returncode == 0, r.stderr
    assert [p["name"] for p in doc["plugins"]] == ["cpu"]
    assert [d["index"] for d in doc["plugins"][0]["devices"]] == [0]
    assert "ops" not in doc["plugins"][0]


def test_text_report_says_what_is_not_reported():
    r = run("--no-ops")
    assert r.returncode == 0, r.stderr
    assert f"Plugin search path (from TGL_PLUGIN_PATH):\n  {PLUGIN_DIR}\n" in r.stdout
    assert "cpu device 0: cpu\n  status                 usable (opened and closed)" in r.stdout
    cpu_part = r.stdout.split("cpu device 0:")[1].split(" device 0:")[0]
    assert "GLSL version           not reported by this plugin" in cpu_part
    assert "Ops (" not in r.stdout
    if "gles" in PLUGINS:
        gles_part = r.stdout.split("gles device 0:")[1]
        assert "GLSL version           OpenGL ES GLSL ES 3." in gles_part
        assert "extensions (" in gles_part and "  limits\n    max_rank" in gles_part
    full = run()
    assert "| op | id | inputs -> outputs |" in full.stdout


def test_skipped_files_are_listed_with_their_reason(tmp_path):
    shutil.copy(os.path.join(PLUGIN_DIR, "libtensorgl-cpu.so"), tmp_path / "libtensorgl-cpu.so")
    (tmp_path / "libtensorgl-broken.so").write_text("not a shared library\n")
    r, doc = run_json("--no-ops", plugin_path=f"{PLUGIN_DIR}:{tmp_path}:/nonexistent/tgl")
    assert r.returncode == 0, r.stderr
    reasons = {s["path"]: s["reason"] for s in doc["skipped"]}
    assert reasons[str(tmp_path / "libtensorgl-cpu.so")].startswith("shadowed by " + PLUGIN_DIR), reasons
    assert "cannot be loaded (TGL_ERROR_PLUGIN_NOT_LOADABLE)" in reasons[str(tmp_path / "libtensorgl-broken.so")]
    assert "No such file or directory" in reasons["/nonexistent/tgl"]
    assert sorted(p["name"] for p in doc["plugins"]) == sorted(PLUGINS)


def test_missing_plugin_dir_fails_with_the_reason():
    r = run("--no-ops", plugin_path="/nonexistent/tensorgl-plugins")
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "no plugin could be loaded (search path from TGL_PLUGIN_PATH: /nonexistent/tensorgl-plugins)" in r.stderr
    assert "search directory cannot be read: No such file or directory" in r.stderr
    r, doc = run_json(plugin_path="/nonexistent/tensorgl-plugins")
    assert r.returncode == 1 and doc["plugins"] == [] and doc["usable_devices"] == 0
    assert "no plugin could be loaded" in doc["error"]


def test_plugin_asked_for_that_cannot_load_fails():
    r = run("--plugin", "cpu", "--plugin", "no_such_plugin", "--no-ops")
    assert r.returncode == 1
    assert "plugin no_such_plugin cannot be loaded (TGL_ERROR_PLUGIN_NOT_FOUND)" in r.stderr, r.stderr


def test_no_usable_device_fails_with_the_plugins_reason():
    r = run("--plugin", "cpu", "--device=7", "--no-ops")
    assert r.returncode == 1
    assert "no usable device; cpu: " in r.stderr and "no device 7" in r.stderr, r.stderr
    if "gles" in PLUGINS:
        r, doc = run_json("--plugin", "gles", env_extra={"TGL_DEVICE": "99"})
        assert r.returncode == 1
        assert doc["plugins"][0]["device_count"] == 0
        assert "TGL_DEVICE=99 selects no device" in doc["plugins"][0]["no_device"]
        assert "TGL_DEVICE=99 selects no device" in r.stderr


def test_ops_markdown_is_the_op_table():
    r = run("--ops-markdown", *[a for p in PLUGINS for a in ("--plugin", p)])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "| op | id | inputs -> outputs | " + " | ".join(PLUGINS) + " |"
    assert any(line.startswith("| `matmul` | ") for line in lines)
    # Without --plugin: every plugin on the search path, in search order.
    assert run("--ops-markdown").stdout.splitlines()[0].count("|") == 4 + len(PLUGINS)
