"""Writes for red/blue team challenges, a module per idea: the challenge, submissions
and their pairings, judged pairings, the regression set."""
