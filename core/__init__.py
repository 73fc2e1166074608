"""The bottom floor every app stands on: the application error, the API conventions and
the rate limiter. Imports none of our packages."""
