"""The five networks of samples/models at small sizes, against PyTorch on the CPU, through
tensorgl-run and tensorgl.onnx.InferenceSession, on every plugin of TGL_TEST_PLUGINS.

Environment (set by ctest, runtime/tests/CMakeLists.txt): TGL_RUN (tensorgl-run), TGL_TEST_PLUGINS
("cpu,gles"), TGL_MODEL_NETS (which networks; default all). Random weights and inputs use a fresh
seed, named in every failure message; TGL_TEST_SEED replays it.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

pytest.importorskip("torch")
if any(n != "gpt2" and n != "bert" for n in os.environ.get("TGL_MODEL_NETS", ",".join(models.NETS)).split(",")):
    pytest.importorskip("torchvision")

RUN = os.environ.get("TGL_RUN", "")
PLUGINS = [p for p in os.environ.get("TGL_TEST_PLUGINS", "cpu").split(",") if p]
NETS = [n for n in os.environ.get("TGL_MODEL_NETS", ",".join(models.NETS)).split(",") if n]
SEED = int(os.environ.get("TGL_TEST_SEED", np.random.SeedSequence().entropy % (1 << 31)))


@pytest.fixture(scope="module", params=NETS)
def exported(request, tmp_path_factory):
    net = request.param
    d = tmp_path_factory.mktemp(net)
    models.export(net, str(d), size="small", batch=2 if net in ("mobilenet_v3_large", "bert") else 1, seed=SEED)
    return net, str(d)


@pytest.mark.parametrize("plugin", PLUGINS)
def test_tensorgl_run_matches_pytorch(exported, plugin, tmp_path):
    net, d = exported
    tol = models.TOLERANCES[net]
    for args, expected in models.tensorgl_run_commands(d, plugin, str(tmp_path)):
        p = subprocess.run([RUN, *args], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, "seed %d: tensorgl-run %s -> %d\n%s%s" % (SEED, " ".join(args), p.returncode, p.stdout, p.stderr)
        out_dir = args[args.index("--output-dir") + 1]
        for name, want_path in expected.items():
            got, want = np.load(os.path.join(out_dir, name + ".npy")), np.load(want_path)
            assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
            assert models.within(got, want, tol), "seed %d: %s %s on %s: max abs diff %.3g (%.3g of max|torch|), tolerance %s" % (
                (SEED, net, name, plugin) + models.max_diff(got, want) + (tol,))


@pytest.mark.parametrize("plugin", PLUGINS)
def test_session_matches_pytorch(exported, plugin):
    net, d = exported
    # A GPU plugin's session replays the model as an ABI 1.2 graph (what the bench measures; the
    # tensorgl-run test above issues the same plan op by op): one load per plugin keeps it short.
    for graph in [plugin != "cpu"]:
        result = models.check(net, d, plugin, record_graph=graph, log=lambda s: None)
        bad = {k: v for k, v in result.items() if not v[2]}
        assert not bad, "seed %d: %s on %s%s out of tolerance %s: %s" % (
            SEED, net, plugin, " (graph)" if graph else "", models.TOLERANCES[net], result)
        if net == "gpt2":
            assert "tokens" in result and "step_logits" in result, result
