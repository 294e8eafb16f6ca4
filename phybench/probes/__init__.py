"""Generalisation probes (paper section 5): one module per probe."""
from .. import tasks as _tasks  # noqa: F401  the task registry imports every probe module, in its order
