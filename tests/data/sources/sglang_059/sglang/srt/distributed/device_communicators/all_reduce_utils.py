"""Synthetic stand-in for a table module (stackcheck test data)."""

UNIT = 1 << 20

TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES = {
    9: {2: 32 * UNIT, 8: 96 * UNIT},
    10: {2: 32 * UNIT, 8: 96 * UNIT},
}
