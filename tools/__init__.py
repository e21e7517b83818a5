"""strata's command-line tools: thin click wrappers over library functions."""
