"""Image operators (TVM's `topi.image`)."""
from .resize import resize2d  # noqa: F401
