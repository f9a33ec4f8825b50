"""What a box is: the typed shapes of the facts, reading a saved facts document (checked against the report schema
without importing jsonschema), the implied facts a facts file leaves out, and the values facts hold (versions,
CUDA targets)."""
