from redblue.teams import admin as teams_admin  # noqa: F401 - registers the team admins
