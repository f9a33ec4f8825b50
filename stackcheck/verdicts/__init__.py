"""facts + manifests -> verdicts: the evaluation context and its documented fact paths, the rule engine, each
feature's path to the kernel."""
