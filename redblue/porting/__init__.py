"""Import and export of a workspace's challenges as one YAML file (docs/import-export.md).

It lives in `redblue` because that is the one app allowed to see both the challenges and
the red/blue challenges (SPEC §2 floors)."""
