"""Every write of the challenges app, one module per thing it owns."""
