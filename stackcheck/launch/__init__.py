"""Around a server's launch: the gate (command line -> required features -> allow or refuse), its preflight checks,
the launch recommendation, the watched child and the crash triage."""
