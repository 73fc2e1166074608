from collections.abc import Generator
from typing import Any

from bridge_client import BridgeError, judge
from dify_plugin import Tool
from dify_plugin.entities.tool import ToolInvokeMessage


class JudgingLlmTool(Tool):
    def _invoke(self, tool_parameters: dict[str, Any]) -> Generator[ToolInvokeMessage]:
        credentials = self.runtime.credentials
        try:
            answer = judge(
                base_url=credentials["base_url"],
                bridge_key=credentials["bridge_key"],
                goal=tool_parameters.get("goal") or "",
                response=tool_parameters.get("response") or "",
                hints=tool_parameters.get("hints") or "",
                workflow_run_id=tool_parameters.get("workflow_run_id") or "",
                judge_model=tool_parameters.get("judge_model") or "",
                rating_scale=tool_parameters.get("rating_scale"),
                pass_threshold=tool_parameters.get("pass_threshold"),
            )
        except BridgeError as exc:
            raise ValueError(str(exc)) from None
        for name in ("judge_passed", "judge_rating", "judge_feedback"):
            yield self.create_variable_message(name, answer.get(name))
        yield self.create_json_message(answer)
        yield self.create_text_message(answer.get("judge_feedback") or "")
