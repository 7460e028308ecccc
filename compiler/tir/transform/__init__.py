"""One pass per file; each exposes `pass_name(mod: IRModule) -> IRModule`."""
