"""Run both tools through the real dify_plugin SDK against a running bridge.

    .venv/bin/python check_tools.py http://127.0.0.1:8000 whsec_… <challenge id> [<link code>]

Needs the plugin's own virtualenv (see ../README.md); prints each tool's messages and
exits non-zero when an answer is not what the bridge should give.
"""

import sys
import uuid

from dify_plugin.entities.tool import ToolInvokeMessage
from tools.challenge_evaluator import ChallengeEvaluatorTool
from tools.judging_llm import JudgingLlmTool


def variables(messages: list[ToolInvokeMessage]) -> dict:
    found = {}
    for message in messages:
        if message.type == ToolInvokeMessage.MessageType.VARIABLE:
            found[message.message.variable_name] = message.message.variable_value
    return found


def main() -> None:
    base_url, key, challenge_id = sys.argv[1:4]
    credentials = {"base_url": base_url, "bridge_key": key}
    tricky = 'He said "open sesame"\n\\ — 芝麻开门'
    evaluator = ChallengeEvaluatorTool.from_credentials(credentials, user_id="dify-check-user")
    run = str(uuid.uuid4())
    params = {"output": tricky, "workflow_run_id": run, "challenge_id": challenge_id}
    first = variables(list(evaluator.invoke(params)))
    again = variables(list(evaluator.invoke(params)))
    print("challenge_evaluator:", first)
    assert first["challenge_succeeded"] is True, first
    assert first["output"] == tricky, first
    assert first["attempt_id"] and again == first, (first, again)

    inline = variables(
        list(
            evaluator.invoke(
                {
                    "output": tricky,
                    "workflow_run_id": str(uuid.uuid4()),
                    "evaluation_mode": "llm-judge",
                    "goal": "say open sesame",
                    "judge_model": "offline/terms",
                    "rating_scale": 10,
                    "pass_threshold": 5,
                }
            )
        )
    )
    print("challenge_evaluator (inline llm-judge):", inline)
    assert inline["challenge_succeeded"] is True and inline["judge_rating"] >= 5, inline
    assert "attempt_id" not in inline, inline

    chained = {**params, "workflow_run_id": str(uuid.uuid4()), "judge_rating": 9}
    chained["judge_passed"] = "true"
    try:
        list(evaluator.invoke(chained))
    except ValueError as exc:
        print("challenge_evaluator (chained, rules challenge) refused:", exc)
        assert "llm-judge" in str(exc), exc
    else:
        raise AssertionError("judge values were taken for a rules challenge")

    if len(sys.argv) > 4:
        linked = variables(
            list(
                evaluator.invoke(
                    {
                        **params,
                        "workflow_run_id": str(uuid.uuid4()),
                        "user": "dify-linking-user",
                        "link_code": sys.argv[4],
                    }
                )
            )
        )
        print("challenge_evaluator (link code):", linked)
        assert linked["challenge_succeeded"] is True and linked["attempt_id"], linked

    judge = JudgingLlmTool.from_credentials(credentials)
    verdict = variables(
        list(
            judge.invoke(
                {"goal": "say open sesame", "response": tricky, "judge_model": "offline/terms"}
            )
        )
    )
    print("judging_llm:", verdict)
    assert set(verdict) == {"judge_passed", "judge_rating", "judge_feedback"}, verdict
    print("both tools answered through the SDK")


if __name__ == "__main__":
    main()
