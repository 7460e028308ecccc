"""Loop-IR passes (one per file under `transform/`) and the pipeline that runs them."""
from .pipeline import lower_passes, run_passes  # noqa: F401
