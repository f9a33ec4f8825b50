"""iperf37 (issue 21): bench/iperf36_ab.py's rows on two trees, with the ok-elsewhere answers that a plan with a request
keeps (upstream/ in the cache directory, stackcheck.assembly.plan_cache.keep_upstream) either removed before every
run like the answer/ and gate/ directories (`--cold`: no request on these facts was ever planned) or kept
(the default, "warm": the same facts planned before with another request or by another command line; their answer/
removed, so nothing is served whole). Neither is a box never seen with the same hardware: the answers are kept
under the facts' whole key (plan_cache.key_of), not a key of the hardware alone.

    python3 bench/iperf37_ab.py TREE_A [TREE_B] [--cold] [iperf36_ab.py's options]"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import iperf36_ab

COLD = "--cold" in sys.argv
if COLD:
    sys.argv.remove("--cold")
    LEAVES = ("answer", "gate", "upstream")
else:
    LEAVES = ("answer", "gate")


def _new_box(cache: str) -> None:
    for leaf in LEAVES:
        shutil.rmtree(os.path.join(cache, leaf), ignore_errors=True)


iperf36_ab._new_box = _new_box

if __name__ == "__main__":
    print("cold: upstream/ removed before every run" if COLD else "warm: upstream/ kept between runs")
    sys.exit(iperf36_ab.main())
