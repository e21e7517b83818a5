"""strata's passes: one module per pass, named after its flag."""

from .registry import PassFailure, PassInfo, all_passes, get, register_pass

__all__ = ["PassFailure", "PassInfo", "all_passes", "get", "register_pass"]
