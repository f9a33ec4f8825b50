"""The manifests: loading the shipped and user data, full validation, the sources every output document cites."""
