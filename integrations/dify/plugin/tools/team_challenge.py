from collections.abc import Generator
from typing import Any

from bridge_client import BridgeError, team_challenge
from dify_plugin import Tool
from dify_plugin.entities.tool import ToolInvokeMessage

OUTPUTS = (
    "team",
    "judge_passed",
    "judge_rating",
    "judge_feedback",
    "categories",
    "team_points",
    "total_points",
    "status",
    "submission_id",
    "pairing_id",
)


class TeamChallengeTool(Tool):
    def _invoke(self, tool_parameters: dict[str, Any]) -> Generator[ToolInvokeMessage]:
        credentials = self.runtime.credentials
        try:
            answer = team_challenge(
                base_url=credentials["base_url"],
                bridge_key=credentials["bridge_key"],
                red_blue_challenge_id=tool_parameters.get("red_blue_challenge_id") or "",
                team_choice=tool_parameters.get("team_choice") or "",
                prompt=tool_parameters.get("prompt") or "",
                user=tool_parameters.get("user") or self.runtime.user_id or "",
                workflow_run_id=tool_parameters["workflow_run_id"],
            )
        except BridgeError as exc:
            raise ValueError(str(exc)) from None
        for name in OUTPUTS:
            yield self.create_variable_message(name, answer.get(name))
        yield self.create_json_message(answer)
        yield self.create_text_message(answer.get("judge_feedback") or answer.get("status", ""))
