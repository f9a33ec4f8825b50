"""The command line's verbs, one module per verb (add_arguments + run), the argument parser and the arguments
several verbs share."""
