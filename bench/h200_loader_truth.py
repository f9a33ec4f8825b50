"""Ground truth for the loader and toolkit lookups the probes make without loading or running anything (run on the
device; prints, never fails).

For each CUDA library soname the cuda_libs probe reads (stackcheck.probes.cudalibs.SONAMES) and each way of writing
LD_LIBRARY_PATH a launch may use (unset; an absolute directory; a relative one, from the launch directory; `;` as the
separator, which glibc's loader also takes; an empty element, which the loader reads as the working directory), the
probe's answer (ProbeContext with that environment and `launch_cwd`) is set beside the dynamic loader's own: a child
Python started with that environment in that directory loads the soname with ctypes and prints the file
/proc/self/maps shows for it. For the CUDA toolkit a torch extension build picks, the toolkits probe's
`active_for_build` entry is set beside torch.utils.cpp_extension's own `_find_cuda_home()` run under the same PATH and
directory (a relative PATH entry before the real nvcc's directory). One line per reading: the variant, the probe's
answer, the box's answer, and `agree` / `DIFFER` / `unknown` (the probe said it cannot tell: never a pass).

    python3 bench/h200_loader_truth.py [--python /opt/torch/.venv/bin/python3]
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from stackcheck.probes import ProbeContext
from stackcheck.probes.runner import run_probes

LOAD = (
    "import ctypes, sys\n"
    "try:\n"
    "    ctypes.CDLL(sys.argv[1])\n"
    "except OSError:\n"
    "    print('absent'); raise SystemExit\n"
    "stem = '/' + sys.argv[1].split('.so')[0] + '.so'\n"
    "maps = [line.split()[-1] for line in open('/proc/self/maps') if stem in line]\n"
    "print(maps[0] if maps else 'loaded, not mapped')\n"
)
CUDA_HOME = "from torch.utils.cpp_extension import _find_cuda_home as f; print(f())"


def loaded(python: str, soname: str, env: dict[str, str], cwd: str) -> str:
    out = subprocess.run(
        [python, "-c", LOAD, soname], env=env, cwd=cwd, capture_output=True, text=True, check=False, timeout=60
    )
    return out.stdout.strip() or f"error: {out.stderr.strip()[-200:]}"


def real(path: str | None) -> str | None:
    return os.path.realpath(path) if path else path


def library_dirs(python: str) -> list[str]:
    """The directories of the interpreter's site-packages that hold a CUDA runtime (torch's nvidia wheels)."""
    out = subprocess.run(
        [python, "-c", "import site; print('\\n'.join(site.getsitepackages()))"],
        capture_output=True,
        text=True,
        check=False,
    )
    dirs = set()
    for sp in out.stdout.split():
        for hit in glob.glob(f"{sp}/nvidia/**/libcudart.so.*", recursive=True):
            dirs.add(os.path.dirname(hit))
    return sorted(dirs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    from stackcheck.probes.cudalibs import SONAMES

    base = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH")}
    variants: list[tuple[str, dict[str, str], str]] = [("unset", dict(base), "/")]
    for d in library_dirs(args.python):
        parent, leaf = os.path.split(d)
        variants += [
            (f"abs {d}", {**base, "LD_LIBRARY_PATH": d}, "/"),
            (f"relative {leaf} from {parent}", {**base, "LD_LIBRARY_PATH": leaf}, parent),
            (f"';' /nonexistent;{d}", {**base, "LD_LIBRARY_PATH": f"/nonexistent;{d}"}, "/"),
            (f"empty element ':' from {d}", {**base, "LD_LIBRARY_PATH": ":"}, d),
        ]
    print(f"python {args.python}; {len(variants)} LD_LIBRARY_PATH variants")
    for name, env, cwd in variants:
        ctx = ProbeContext(env=env, launch_env=env, launch_cwd=cwd)
        facts, _ = run_probes(["cuda_libs"], ctx)
        section = facts.get("cuda_libs") or {}
        unreadable = section.get("unreadable") or {}
        for soname in SONAMES:
            truth = loaded(args.python, soname, env, cwd)
            probe = section.get(soname)
            if soname in unreadable or (probe is None and section.get("unknown")):
                verdict = "unknown"
            elif (probe is None and truth == "absent") or (probe and real(probe) == real(truth)):
                verdict = "agree"
            else:
                verdict = "DIFFER"
            print(f"cuda_libs [{name}] {soname}: probe {probe} box {truth}: {verdict}")
    # the toolkit a torch extension build picks, under PATH variants
    nvcc_dirs = sorted({os.path.dirname(p) for p in glob.glob("/usr/local/cuda*/bin/nvcc")})
    path0 = base.get("PATH", "/usr/bin:/bin")
    for d in nvcc_dirs:
        parent, leaf = os.path.split(d)
        for name, path, cwd in (
            (f"abs {d} first", f"{d}:{path0}", "/"),
            (f"relative {leaf} from {parent} first", f"{leaf}:{path0}", parent),
            (f"empty element from {d} first", f":{path0}", d),
        ):
            env = {**base, "PATH": path}
            ctx = ProbeContext(env=env, launch_env=env, launch_cwd=cwd)
            facts, _ = run_probes(["python", "toolkits"], ctx)
            chosen = next((e for e in facts.get("cuda_toolkits") or [] if e.get("active_for_build")), None)
            probe = chosen.get("path") if chosen else None
            out = subprocess.run(
                [args.python, "-c", CUDA_HOME], env=env, cwd=cwd, capture_output=True, text=True, check=False
            )
            # (torch keeps a relative home as written: '' for `bin` or an empty entry, printed as an empty line)
            lines = out.stdout.rstrip("\n").split("\n")
            truth = lines[-1] if out.returncode == 0 else f"error: {out.stderr[-200:]}"
            verdict = "agree" if real(probe) == real(truth) else ("unknown" if probe is None else "DIFFER")
            print(f"toolkits [{name}] build toolkit: probe {probe} box {truth!r}: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
