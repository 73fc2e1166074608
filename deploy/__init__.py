"""The deployment's files and `make cluster` (deploy/cluster.py)."""
