"""Synthetic stand-in for a communicator module (stackcheck test data)."""

from .all_reduce_utils import TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES


class Helper:
    _WORLD_SIZES_MULTIMEM = {7: [2]}


class TorchSymmMemCommunicator:
    _WORLD_SIZES_MULTIMEM = {9: [4, 8], 10: [8]}

    def __init__(self, cap, ranks):
        self.cap = cap
        self.ranks = ranks
        first = TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES[9]  # a literal key says nothing about the device
        limit = TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES[self.cap][self.ranks]
        fast = self.ranks in self._WORLD_SIZES_MULTIMEM[self.cap]
        self.limit = limit
        self.fast = fast
