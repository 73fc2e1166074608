"""Agent scenarios (SPEC §9): the scenario's shape (`schema`), its rules (`matching`), and the
loop that runs a model with simulated tools over the player's injected content (`loop`)."""
