/* A stand-in libnvidia-ml.so.1 for benches on a box without a driver (bench/critical_path.py builds it with the
   system C compiler): nvmlInitWithFlags / nvmlInit_v2 take $STACKCHECK_BENCH_NVML_INIT_MS milliseconds (default
   50) the first time in a process, without the interpreter lock (a ctypes call), then only count, as the
   driver's NVML counts its starts; nvmlShutdown uncounts. Calls made while the first is under way wait for it. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int starts = 0, started_once = 0;

int nvmlInitWithFlags(unsigned int flags) {
    (void)flags;
    pthread_mutex_lock(&lock);
    if (!started_once) {
        const char *ms = getenv("STACKCHECK_BENCH_NVML_INIT_MS");
        double wait = ms ? atof(ms) : 50.0;
        struct timespec ts = {(time_t)(wait / 1000), (long)((wait - 1000 * (time_t)(wait / 1000)) * 1e6)};
        nanosleep(&ts, NULL);
        started_once = 1;
    }
    starts++;
    pthread_mutex_unlock(&lock);
    return 0;
}

int nvmlInit_v2(void) { return nvmlInitWithFlags(0); }

int nvmlShutdown(void) {
    pthread_mutex_lock(&lock);
    int ret = starts > 0 ? (starts--, 0) : 1; /* NVML_ERROR_UNINITIALIZED */
    pthread_mutex_unlock(&lock);
    return ret;
}
