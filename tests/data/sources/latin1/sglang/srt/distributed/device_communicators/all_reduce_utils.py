# résumé: latin-1 bytes, not UTF-8
TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES = {9: 1}
