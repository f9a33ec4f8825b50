"""Executing this would raise at import (stackcheck test data)."""

raise ImportError("executed")


class TorchSymmMemCommunicator:
    _WORLD_SIZES_MULTIMEM = {9: print("executed"), 10: None}

    def run(self):
        return TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES[self.cap]
