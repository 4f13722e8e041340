"""PyTorch programs run unchanged: ``python -m glasstorch run prog.py`` against
``python prog.py`` on real PyTorch, comparing what they print."""
import os
import pathlib
import subprocess
import sys

import pytest

PROGRAMS = pathlib.Path(__file__).parent / "programs"


def run(args, port):
    env = dict(os.environ, PORT=str(port), PYTHONWARNINGS="ignore")
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          timeout=300, cwd=PROGRAMS)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("program", ["ddp_single_rank.py"])
def test_program_prints_what_pytorch_prints(program):
    theirs = run([program], 29571)
    ours = run(["-m", "glasstorch", "run", program], 29572)
    assert ours.replace("real torch: False", "real torch: True") == theirs
    assert "real torch: False" in ours


def test_the_runner_binds_glasstorch_for_every_import_form(tmp_path):
    script = tmp_path / "imports.py"
    script.write_text(
        "import sys\n"
        "import torch\n"
        "import torch.nn as nn\n"
        "import torch.nn.functional as F\n"
        "from torch.utils.data import DataLoader\n"
        "from torch.nn.parallel import DistributedDataParallel\n"
        "import glasstorch\n"
        "assert torch is glasstorch and nn is glasstorch.nn and F is glasstorch.nn.functional\n"
        "assert DataLoader is glasstorch.utils.data.DataLoader\n"
        "assert sys.modules['torch.nn'] is glasstorch.nn\n"
        "assert not any(getattr(m, '__file__', '') and 'site-packages/torch/' in m.__file__\n"
        "               for m in list(sys.modules.values()))\n"
        "print(sys.argv[1:])\n")
    out = subprocess.run([sys.executable, "-m", "glasstorch", "run", str(script), "a", "--b"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "['a', '--b']\n"


def test_a_module_glasstorch_lacks_is_not_found(tmp_path):
    script = tmp_path / "missing.py"
    script.write_text("import torch.not_a_module\n")
    out = subprocess.run([sys.executable, "-m", "glasstorch", "run", str(script)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "ModuleNotFoundError: No module named 'torch.not_a_module'" \
        in out.stderr


def test_onnx_is_importable_and_refuses_export_clearly():
    import torch

    import glasstorch as gt
    assert set(gt.onnx.OperatorExportTypes.__members__) == set(torch.onnx.OperatorExportTypes.__members__)
    assert set(gt.onnx.TrainingMode.__members__) == set(torch.onnx.TrainingMode.__members__)
    assert gt.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    with pytest.raises(gt.onnx.OnnxExporterError, match="cannot export to ONNX"):
        gt.onnx.export(gt.nn.Linear(2, 2), (gt.ones(1, 2),), "model.onnx")
