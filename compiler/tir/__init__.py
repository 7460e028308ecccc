"""Loop-IR passes (one per file under `transform/`), the pipeline that runs them, and the
hand-written loop-IR calls users write (`call_packed`)."""
from .op import call_packed  # noqa: F401
from .pipeline import lower_passes, run_passes  # noqa: F401
