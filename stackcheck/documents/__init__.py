"""The output documents: the versioned report, the diff of two reports, the fleet summary of many."""
