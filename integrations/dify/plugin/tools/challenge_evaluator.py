from collections.abc import Generator
from typing import Any

from bridge_client import BridgeError, evaluate
from dify_plugin import Tool
from dify_plugin.entities.tool import ToolInvokeMessage


def _flag(value: Any) -> bool | None:
    # Dify hands a boolean form field over as a bool, a string or nothing at all.
    if value in (None, ""):
        return None
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value)


class ChallengeEvaluatorTool(Tool):
    def _invoke(self, tool_parameters: dict[str, Any]) -> Generator[ToolInvokeMessage]:
        credentials = self.runtime.credentials
        try:
            answer = evaluate(
                base_url=credentials["base_url"],
                bridge_key=credentials["bridge_key"],
                output=tool_parameters.get("output") or "",
                workflow_run_id=tool_parameters["workflow_run_id"],
                challenge_id=tool_parameters.get("challenge_id") or "",
                user=tool_parameters.get("user") or self.runtime.user_id or "",
                prompt=tool_parameters.get("prompt") or "",
                success_type=tool_parameters.get("success_type") or "",
                success_pattern=tool_parameters.get("success_pattern") or "",
                tokens_total=tool_parameters.get("tokens_total"),
                elapsed_ms=tool_parameters.get("elapsed_ms"),
                judge_passed=_flag(tool_parameters.get("judge_passed")),
                judge_rating=tool_parameters.get("judge_rating"),
                judge_feedback=tool_parameters.get("judge_feedback") or "",
                evaluation_mode=tool_parameters.get("evaluation_mode") or "",
                goal=tool_parameters.get("goal") or "",
                judge_model=tool_parameters.get("judge_model") or "",
                rating_scale=tool_parameters.get("rating_scale"),
                pass_threshold=tool_parameters.get("pass_threshold"),
                link_code=tool_parameters.get("link_code") or "",
            )
        except BridgeError as exc:
            raise ValueError(str(exc)) from None
        for name, value in answer.items():
            yield self.create_variable_message(name, value)
        yield self.create_json_message(answer)
        yield self.create_text_message(answer.get("message", ""))
