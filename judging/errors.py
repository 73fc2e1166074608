class JudgeConfigError(ValueError):
    """A judge or plugin setting that cannot work; the message says how to fix it."""
