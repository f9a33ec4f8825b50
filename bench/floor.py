"""What every bench/ script measures against, in one place: the bare-NVML floor (the least any audit must do:
import pynvml, initialise NVML, read the driver version and each GPU's capability) and the wrapper that times
one child process (wall seconds, CPU seconds of the child, exit status). Standard library only; the scripts run
as `python bench/NAME.py`, so this module is importable beside them."""

FLOOR = (
    "import pynvml\n"
    "pynvml.nvmlInit()\n"
    "pynvml.nvmlSystemGetDriverVersion()\n"
    "for i in range(pynvml.nvmlDeviceGetCount()):\n"
    "    pynvml.nvmlDeviceGetCudaComputeCapability(pynvml.nvmlDeviceGetHandleByIndex(i))\n"
    "pynvml.nvmlShutdown()\n"
)

#: run as `python -c WRAPPER ARGV...`: prints "wall_s cpu_s exit_status" of ARGV
WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "dt = time.perf_counter() - t\n"
    "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(dt, r.ru_utime + r.ru_stime, p.returncode)\n"
)
