"""Deep probes: binary architectures, shared-library resolution, source tables read with `ast`."""
