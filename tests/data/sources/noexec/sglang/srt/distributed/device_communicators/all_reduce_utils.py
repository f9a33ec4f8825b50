"""If this module were executed, it would print, write a marker and exit (stackcheck test data)."""

import os
import sys

print("EXECUTED: all_reduce_utils")
with open(os.environ.get("STACKCHECK_EXEC_MARKER", "/nonexistent/marker"), "w") as fh:
    fh.write("executed")
sys.exit(17)
raise RuntimeError("executed")

TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES = {9: __import__("os").system("false"), 10: exec("1/0")}
