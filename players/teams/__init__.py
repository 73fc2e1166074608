"""Teams of players in a workspace (issue 24): a captain, an invite code, a size limit the
workspace's creators set. The models are players.models.Team and TeamMember; the team
scoreboard, which needs the challenges' boards, is challenges.selectors.team_scoreboard.

Who may do what: any player creates a team (becoming its captain) or joins one with its
code while a seat is free; a member leaves (a leaving captain hands over to the member who
joined first; the last one out dissolves the team); the captain removes members and makes a
new code; creators of the workspace see every team and remove members.
"""
