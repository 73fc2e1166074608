"""Every non-trivial read of the challenges app, one module per thing it reads."""
